//! # toolgram-eval — does the grammar beat JSON and prompting, and what does it cost?
//!
//! Evaluations on a public benchmark (BFCL) and on tasks for the grammar tools, run on the run
//! stage ([`toolgram_runtime`]) in every call mode and beside a peer server, and reported as
//! tables, JSON and a chart; and the benchmarks behind `toolgram bench`.
//!
//! Contents:
//! - [`bfcl`] — BFCL read as BFCL reads it (one reader for the project) and scored by a port
//!   of BFCL's AST checker;
//! - [`datasets`] — the other readers, one per dataset: MaskBench, JSON-Schema-Test-Suite;
//! - [`run`] — items × modes on one runtime (model loaded once, tool prefixes reused), each
//!   item recorded in `items.jsonl` (resumable);
//! - [`peer`] — the same items against an OpenAI-compatible server's own tool calling
//!   (llama-server `--jinja`), read strictly and leniently;
//! - [`report`] — rows per category and mode, the terminal table, `results.json`;
//! - [`tools`] — the built-in grammar tools against their JSON form, on tasks written for
//!   this eval and scored by running the call;
//! - [`chart`] — the SVG chart;
//! - [`bench`] — the benchmarks: decode timings constrained vs unconstrained, JSON-Schema
//!   coverage per compiler target, mask time per token against llama.cpp's GBNF sampler,
//!   grammar-tool token counts, one call against llama-server.
//!
//! This crate must not compile grammars, decode or parse model text itself: the compilers,
//! the engine, the run stage and the core parsers do; it reads data, drives runs, measures and
//! scores. It must not print: the CLI does.

#![deny(missing_docs)]

pub mod bench;
pub mod bfcl;
pub mod chart;
pub mod datasets;
mod error;
pub mod peer;
pub mod record;
pub mod report;
pub mod run;
pub mod tools;

pub use error::EvalError;

/// Per-run settings.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Most tokens per attempt.
    pub max_tokens: usize,
    /// Most attempts per item (retries after a failed validation).
    pub max_attempts: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            max_tokens: 512,
            max_attempts: 3,
        }
    }
}
