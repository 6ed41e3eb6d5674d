//! What one attempt produced ([`ModelReply`]) and the tokens it used ([`Usage`]): the retry
//! loop's input from a model, shared by the loop and the feedback it writes.
//!
//! This module must not parse or validate.

use toolgram_core::ToolCall;

/// What one attempt produced, already parsed by the model's own parser.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    /// The reasoning block, if any.
    pub reasoning_content: Option<String>,
    /// Text before or instead of the calls.
    pub content: Option<String>,
    /// The calls, not yet validated.
    pub tool_calls: Vec<ToolCall>,
    /// The raw text the model wrote.
    pub raw: String,
    /// Tokens this attempt used, when the model or provider counted them.
    pub usage: Option<Usage>,
}

pub use toolgram_core::define::reply::Usage;
