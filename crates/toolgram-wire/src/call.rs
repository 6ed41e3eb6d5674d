//! The reply every API writes: a validated [`Call`] and a finished [`Reply`] — its reasoning,
//! text, calls, why it ended and the tokens it used. Values only: each API's module spells
//! them; this module must not.

use serde_json::Value;
use toolgram_core::define::reply::{FinishReason, Usage};

/// A validated call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Call id (`call_…`).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments or input.
    pub kind: CallKind,
}

/// A function call's arguments, or a grammar (custom) tool's input text.
#[derive(Debug, Clone, PartialEq)]
pub enum CallKind {
    /// A JSON-Schema function tool.
    Function {
        /// The arguments object.
        arguments: Value,
    },
    /// A grammar tool (OpenAI "custom" tool).
    Custom {
        /// The text, in the tool's grammar.
        input: String,
    },
}

impl Call {
    /// The arguments as OpenAI sends them: a JSON string for a function, the raw input for
    /// a custom tool.
    pub fn arguments_text(&self) -> String {
        match &self.kind {
            CallKind::Function { arguments } => arguments.to_string(),
            CallKind::Custom { input } => input.clone(),
        }
    }
}

/// A finished reply, as every API's writer reads it.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    /// The reasoning block's text, if any.
    pub reasoning: Option<&'a str>,
    /// Text before or instead of the calls.
    pub content: Option<&'a str>,
    /// The calls, in order.
    pub calls: &'a [Call],
    /// Why it ended.
    pub finish_reason: FinishReason,
    /// Tokens used, when counted.
    pub usage: Option<Usage>,
}

impl Reply<'_> {
    /// The reasoning, when there is some.
    pub fn reasoning_text(&self) -> Option<&str> {
        self.reasoning.filter(|t| !t.is_empty())
    }

    /// The text, when there is some.
    pub fn content_text(&self) -> Option<&str> {
        self.content.filter(|t| !t.is_empty())
    }
}
