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

/// Tokens used, as the model or provider counted them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt tokens (the cached ones included).
    pub prompt_tokens: usize,
    /// Generated tokens.
    pub completion_tokens: usize,
    /// Prompt tokens that were not evaluated again (a prefix cache held them).
    pub cached_prompt_tokens: usize,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Self) {
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
        self.cached_prompt_tokens += o.cached_prompt_tokens;
    }
}
