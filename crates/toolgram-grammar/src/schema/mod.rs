//! JSON Schema (draft 2020-12, with draft-04..2019 spellings where they differ) → grammar
//! IR, for the targets that cannot run llguidance's own `%json` (GBNF for llama.cpp, Lark
//! for OpenAI custom tools).
//!
//! Every keyword is looked up in [`keywords`]: enforced by the grammar, enforced after parse
//! (listed in the returned notes), an annotation, or refused by name (a warning under
//! `lenient`). Policies: properties in schema order with optional ones skippable; whitespace
//! bounded ([`WS_RULE`]); numbers with at most 20 integer digits; plain strings admit every
//! JSON escape; recursion through `$ref` becomes rule recursion, and inline nesting deeper
//! than `max_depth` is refused. [`contradictions`] finds subschemas no value satisfies (read
//! when a tool set is checked). This module must not validate instances.

mod compiler;
pub mod contradictions;
pub mod keywords;
mod merge;
pub mod numbers;
pub mod refs;
pub mod strings;
pub mod walk;

pub use compiler::to_grammar;

use serde_json::Value;

/// Name of the bounded whitespace rule: nothing, one space, or a newline and up to 40
/// spaces or tabs.
pub const WS_RULE: &str = "ws";

/// How to compile.
#[derive(Debug, Clone)]
pub struct SchemaOptions {
    /// The tool the schema belongs to, for messages.
    pub tool: Option<String>,
    /// Unknown keywords become warnings instead of errors.
    pub lenient: bool,
    /// Objects listing `properties` without `additionalProperties` are closed (the tool-call
    /// policy of `compile::close_objects`); otherwise they admit extra keys, as JSON Schema
    /// says.
    pub closed_objects: bool,
    /// Deepest inline nesting of subschemas.
    pub max_depth: usize,
}

impl Default for SchemaOptions {
    fn default() -> Self {
        Self {
            tool: None,
            lenient: false,
            closed_objects: false,
            max_depth: 64,
        }
    }
}

/// Something the caller must know about a compiled schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// JSON pointer into the schema.
    pub pointer: String,
    /// The keyword.
    pub keyword: String,
    /// What happened to it.
    pub kind: NoteKind,
}

/// What happened to a keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoteKind {
    /// Not (fully) in the grammar: the validator enforces it after parsing.
    Deferred,
    /// Unknown keyword ignored under `lenient`.
    Warning(String),
}

/// A schema that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}at {pointer}: `{keyword}`: {message}", tool.as_ref().map(|t| format!("tool `{t}` ")).unwrap_or_default())]
pub struct SchemaError {
    /// The tool, when known.
    pub tool: Option<String>,
    /// JSON pointer into the schema.
    pub pointer: String,
    /// The keyword at fault.
    pub keyword: String,
    /// Why.
    pub message: String,
}

/// OpenAPI's numeric `format`s as JSON Schema both compile targets enforce: `int32`/`int64`
/// become integer bounds (tightening any given), `float`/`double` (any JSON number) are
/// dropped. `None` when the schema has none of them.
pub fn openapi_numeric_format(
    map: &serde_json::Map<String, Value>,
) -> Option<serde_json::Map<String, Value>> {
    let (lo, hi): (i64, i64) = match map.get("format").and_then(Value::as_str)? {
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN, i64::MAX),
        "float" | "double" => {
            let mut out = map.clone();
            out.shift_remove("format");
            return Some(out);
        }
        _ => return None,
    };
    let mut out = map.clone();
    out.shift_remove("format");
    let tighter = |key: &str, bound: i64, keep: fn(f64, f64) -> bool| match map
        .get(key)
        .and_then(Value::as_f64)
    {
        Some(given) if keep(given, bound as f64) => map.get(key).cloned(),
        _ => Some(Value::from(bound)),
    };
    if let Some(v) = tighter("minimum", lo, |given, b| given >= b) {
        out.insert("minimum".into(), v);
    }
    if let Some(v) = tighter("maximum", hi, |given, b| given <= b) {
        out.insert("maximum".into(), v);
    }
    Some(out)
}
