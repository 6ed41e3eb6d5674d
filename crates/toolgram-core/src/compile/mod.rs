//! Compile a tool pool + `tool_choice` + `parallel_tool_calls` into ONE grammar in a model
//! family's native call syntax: a discriminated union in which each callable tool's literal
//! name selects that tool's argument grammar. Under `auto` the model writes free text and
//! then, optionally, calls (harmony: a final-channel message or calls); under `none` only
//! text; under `required`/named it must call.
//!
//! - [`union`] — the one construction: an IR skeleton with named slots.
//! - [`lark`] — llguidance's Lark ([`compile()`]): slots as `%json` blocks, lexemes and
//!   special-token references; [`keyword_pass`] prepares each argument schema for `%json`.
//! - [`ir`] — the plain IR ([`ir::compile_ir`]) that the GBNF and OpenAI Lark writers
//!   spell: slots filled by toolgram's own schema compiler.
//!
//! This module must not run a parser, a grammar or a model (the engine checks grammars with
//! llguidance, the eval with llama.cpp).

mod bodies;
mod harmony;
pub mod ir;
pub mod keyword_pass;
pub mod lark;
mod lark_values;
mod shape;
mod slots;
mod union;
mod xml;

pub use keyword_pass::{
    KeywordPass, bare_grammar_schema, grammar_schema, json_style, loose_json_style,
};
pub use lark::{around_answer, compile};

use crate::define::arguments::DeferredKeyword;
use crate::define::request::{Mode, Think};
use crate::define::tool::ToolChoice;
use std::collections::HashMap;

/// Facts about the target vocabulary that change how the grammar is spelled.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// Marker texts that the vocabulary holds as one special token, with that token's id.
    /// They are emitted as token references, so free text can never spell them.
    pub special_tokens: HashMap<String, u32>,
    /// How much of each call the grammar enforces.
    pub mode: Mode,
    /// Whether a `<think>…</think>` block may or must come first.
    pub think: Think,
    /// Unknown schema keywords are listed ([`CompiledGrammar::ignored`]) instead of refused.
    pub lenient: bool,
    /// Argument grammars come from toolgram's own schema compiler (Lark rules) instead of
    /// llguidance's `%json`: the engine's fallback for a schema llguidance refuses (its
    /// whitespace is then the IR's bounded policy, not `json.dumps` spacing).
    pub args_from_ir: bool,
    /// Most calls in one reply when several are allowed (`None`: unbounded): the calls
    /// section ends after this many, so a model writing call after call ends with the calls
    /// it made instead of being cut by its token limit.
    pub max_calls: Option<usize>,
    /// A response format beside the tools (OpenAI's `response_format` or `text.format` sent
    /// with `tools`): the JSON Schema (after the keyword pass) a reply without calls must
    /// match. The reply is then calls or an answer in that schema, never prose and never
    /// both; `None` leaves the text branch free.
    pub answer: Option<serde_json::Value>,
    /// Plan, then calls: where several calls may be made, the reply first states how many
    /// ([`PLAN_PREFIX`] and a digit, 0 for none under `auto`), then makes exactly that many.
    /// A small model that ends its turn after one call (p of a second ≤ 0.014 on BFCL's
    /// parallel items) names the right count far more often when asked first.
    pub plan: bool,
}

/// The line a planned reply opens with, before its count of calls.
pub const PLAN_PREFIX: &str = "Number of tool calls needed: ";

/// The most calls a plan may name (one digit).
pub const PLAN_MAX_CALLS: usize = 9;

/// The result of compiling a request.
#[derive(Debug, Clone)]
pub struct CompiledGrammar {
    /// llguidance Lark grammar text.
    pub lark: String,
    /// The choice it was compiled for.
    pub choice: ToolChoice,
    /// Indices (into the tool set) of the tools that may be called.
    pub callable: Vec<usize>,
    /// Whether several calls may be made.
    pub parallel: bool,
    /// Whether the reply opens with a plan line ([`PLAN_PREFIX`] and its count): asked for
    /// ([`CompileOptions::plan`]) where several calls may be made.
    pub planned: bool,
    /// Keywords the grammar does not express and the validator enforces after parsing.
    pub deferred: Vec<DeferredKeyword>,
    /// Unknown keywords left out under `lenient` (without it they are an error).
    pub ignored: Vec<DeferredKeyword>,
    /// Set by the engine when llguidance refused an argument schema as `%json` and the
    /// argument grammars come from toolgram's own schema compiler: llguidance's message.
    pub args_fallback: Option<String>,
}
