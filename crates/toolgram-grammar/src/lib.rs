//! # toolgram-grammar — grammars as data
//!
//! The language layer of toolgram, as `regex-syntax` is for `regex`: one grammar IR
//! ([`ir::Grammar`]) with readers and writers for GBNF (llama.cpp) and Lark (llguidance, and
//! the subset OpenAI accepts for custom tools), and the translations into it.
//!
//! - [`ir`] — the IR: rules, expressions, character classes, token references.
//! - [`lark`], [`gbnf`] — read and write each text format.
//! - [`regex`] — a regular expression → IR (for `pattern`, Lark terminals, GBNF).
//! - [`json_string`] — the JSON string grammar and its escapes.
//! - [`tree`] — parse trees of a grammar over a text.
//! - [`schema`] — JSON Schema → IR, with THE keyword table ([`schema::keywords`]) and the
//!   `format` lists.
//!
//! Readers refuse what they cannot take with a line and column, never half-read; writers are
//! deterministic and emit only rules reachable from the root. This crate must not know about
//! tools, models or providers, and must not run a grammar engine: checking against llguidance
//! and llama.cpp happens in `toolgram-engine` and its tests.

pub mod gbnf;
pub mod ir;
pub mod json_string;
pub mod lark;
mod lower;
mod names;
pub mod regex;
pub mod schema;
pub mod tree;

pub use ir::{CharClass, Expr, Grammar, Rule, TokenRef};

/// A grammar text that cannot be read, with the 1-based line and column of the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct GrammarError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl GrammarError {
    /// An error at byte offset `at` of `src`.
    pub(crate) fn at(src: &str, at: usize, message: impl Into<String>) -> Self {
        let at = at.min(src.len());
        let before = src.get(..at).unwrap_or(src);
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit('\n')
            .next()
            .map(|l| l.chars().count())
            .unwrap_or(0)
            + 1;
        Self {
            line,
            column,
            message: message.into(),
        }
    }
}
