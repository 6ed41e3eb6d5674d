//! What a reply reports beside its text and calls, on every path and in every API: why it
//! ended ([`FinishReason`]) and the tokens it used ([`Usage`]). Values only: this module
//! must not spell them in any API's JSON (the wire crate does).

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// The reply ended with calls.
    ToolCalls,
    /// The reply ended with text.
    Stop,
    /// The token limit was reached outside any call.
    Length,
}

impl FinishReason {
    /// OpenAI spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::ToolCalls => "tool_calls",
            Self::Stop => "stop",
            Self::Length => "length",
        }
    }
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
