//! # toolgram-eval — does the grammar beat JSON and prompting?
//!
//! Evaluations on a public benchmark (BFCL) and on tasks for the grammar tools, run on the run stage ([`toolgram_runtime`]) in every call
//! mode and beside a peer server, and reported as tables, JSON and a chart.
//!
//! Contents:
//! - [`bfcl`] — BFCL read as BFCL reads it (one reader for the project) and scored by a port
//!   of BFCL's AST checker;
//! - [`run`] — items × modes on one runtime (model loaded once, tool prefixes reused), each
//!   item recorded in `items.jsonl` (resumable);
//! - [`peer`] — the same items against an OpenAI-compatible server's own tool calling
//!   (llama-server `--jinja`), read strictly and leniently;
//! - [`report`] — rows per category and mode, the terminal table, `results.json`;
//! - [`tools`] — the built-in grammar tools against their JSON form, on tasks written for
//!   this eval and scored by running the call;
//! - [`chart`] — the SVG chart.
//!
//! This crate must not compile grammars, decode or parse model text itself: the run stage and
//! the core parsers do; it reads data, drives runs and scores.

#![deny(missing_docs)]

pub mod bfcl;
pub mod chart;
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
