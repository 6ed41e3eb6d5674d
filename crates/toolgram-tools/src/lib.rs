//! Grammar tools: tools whose input is one free-form expression (an arithmetic expression,
//! a patch, a query) rather than a bag of fields. Each is declared once ([`GrammarTool`]):
//! its Lark grammar, how a parse of that grammar maps to the executor's typed input, how a
//! typed input is written back as text, and the executor. The parser is the grammar itself
//! (core's `grammar::tree`), the GBNF and OpenAI-Lark forms come from core's writers, and
//! the JSON fallback shape carries the same text.
//!
//! # Contents
//!
//! | module | what it holds |
//! |---|---|
//! | `definition` | [`GrammarTool`] (grammar, typed input, writer, executor), [`DynTool`], [`Format`], [`RunContext`], [`ToolError`] |
//! | `registry` | [`BUILTINS`] and [`builtin`]; [`load`] for a `tool.toml` manifest naming a `.lark` grammar |
//! | [`apply_patch`], [`code_search`], [`math_eval`], [`regex_tester`], [`shell_constrained`], [`sql_query`] | the built-in tools, a folder each (grammar, parse, executor, samples) |
//! | [`file_tool`] | a grammar tool from a manifest and its grammar file, no Rust |
//! | `process` | running a child process with limits (shared by the tools that run one) |
//!
//! This crate must not load models or keep a second grammar reader: grammars go through
//! core's Lark reader.

pub mod apply_patch;
pub mod code_search;
mod definition;
pub mod file_tool;
pub mod math_eval;
mod process;
pub mod regex_tester;
mod registry;
pub mod shell_constrained;
pub mod sql_query;
#[cfg(test)]
mod testing;

pub use definition::{DynTool, Format, GrammarTool, RunContext, Samples, ToolError};
pub use registry::{BUILTINS, BuildOptions, Entry, builtin, load, names, sample_options};
