//! # toolgram-eval — does the grammar beat JSON and prompting?
//!
//! Evaluations on a public benchmark (BFCL) and on tasks for the grammar tools, run on the run
//! stage ([`toolgram_runtime`]) in every call mode, beside a peer server and under BFCL's own
//! protocol, and reported as tables, JSON and a chart.
//!
//! Contents:
//! - [`bfcl`] — BFCL read as BFCL reads it (one reader for the project) and scored by a port
//!   of BFCL's AST checker;
//! - [`mode`] — how an item is run, and which modes a run gets;
//! - [`run`] — items × modes on one runtime (model loaded once, tool prefixes reused), each
//!   item recorded in `items.jsonl` (resumable);
//! - [`peer`] — the same items against an OpenAI-compatible server's own tool calling
//!   (llama-server `--jinja`), read strictly and leniently;
//! - [`report`] — rows per category and mode, the terminal table, `results.json`;
//! - [`outputs`] — what a run reports when it ends: the rows over every mode in its folder,
//!   BFCL's summary, the text, `results.json` and `chart.svg` written;
//! - [`tools`] — the built-in grammar tools against their JSON form, on tasks written for
//!   this eval and scored by running the call;
//! - [`chart`] — the SVG chart.
//!
//! The benchmarks behind `toolgram bench` are `toolgram-bench`'s.
//!
//! This crate must not compile grammars, decode or parse model text itself: the compilers,
//! the engine, the run stage and the core parsers do; it reads data, drives runs, measures and
//! scores. It must not print: the CLI does.

#![deny(missing_docs)]

pub mod bfcl;
pub mod chart;
mod error;
pub mod mode;
pub mod outputs;
pub mod peer;
pub mod record;
pub mod report;
pub mod run;
pub mod tools;

pub use toolgram_core::define::request::Plan;

pub use error::EvalError;

/// Whose rules a run follows; every record and table row names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// toolgram's A/B protocol: up to `max_attempts` with the validation errors fed back, the
    /// same prompt for every mode, `max_tokens` 512, greedy — for comparing modes, not a
    /// BFCL score.
    #[default]
    Toolgram,
    /// BFCL's function-calling protocol ([`bfcl::fc`]): one attempt, no added system prompt,
    /// BFCL's tool conversion and language hint, temperature 0.001, its decode and verdict —
    /// figures that compare with the leaderboard's.
    Bfcl,
}

impl Protocol {
    /// Its name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Self::Toolgram => "toolgram",
            Self::Bfcl => "bfcl",
        }
    }

    /// Read a protocol name.
    pub fn parse(s: &str) -> Result<Self, EvalError> {
        [Self::Toolgram, Self::Bfcl]
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                EvalError::Unsupported(format!("unknown protocol `{s}` (bfcl, toolgram)"))
            })
    }
}

/// Per-run settings.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Most tokens per attempt (`None`: the protocol's default — 512 under toolgram's, none
    /// sent under BFCL's, so a server applies its own and the embedded model serve's 2,048).
    pub max_tokens: Option<usize>,
    /// Most attempts per item (retries after a failed validation; 1 under BFCL's protocol).
    pub max_attempts: usize,
    /// Whose rules.
    pub protocol: Protocol,
    /// Plan, then calls on the embedded model (a reply states how many calls it will make,
    /// then makes exactly that many; [`Plan`] says what chooses call or text).
    pub plan: Plan,
    /// Added to a call's opening tokens where the reply may call or not, on the embedded
    /// model (docs/eval.md, "Call or text"); `None`: the runtime's default.
    pub call_bias: Option<f32>,
    /// Added to a plan's counts of more than one call, on the embedded model; `None`: the
    /// runtime's default.
    pub count_bias: Option<f32>,
    /// Ballots per item on the embedded model (1: one greedy run).
    pub votes: usize,
    /// Stop free text that repeats itself verbatim, on the embedded model
    /// (`Sampling::stop_repeated_text`).
    pub stop_repeated_text: bool,
}

impl RunOptions {
    /// Attempts per item under the protocol.
    pub fn attempts(self) -> usize {
        match self.protocol {
            Protocol::Toolgram => self.max_attempts.max(1),
            Protocol::Bfcl => 1,
        }
    }

    /// Tokens per attempt on the embedded model.
    pub fn embedded_max_tokens(self) -> usize {
        self.max_tokens.unwrap_or(match self.protocol {
            Protocol::Toolgram => 512,
            Protocol::Bfcl => 2048,
        })
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            max_tokens: None,
            max_attempts: 3,
            protocol: Protocol::Toolgram,
            plan: Plan::Off,
            call_bias: None,
            count_bias: None,
            stop_repeated_text: true,
            votes: 1,
        }
    }
}
