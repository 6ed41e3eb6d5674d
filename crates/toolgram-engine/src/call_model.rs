//! The embedded engine as a [`CallModel`] for `toolgram-retry`'s loop: each attempt is one
//! [`Session::reply`] on the conversation so far (the KV cache keeps the shared prefix).
//!
//! It adapts errors and keeps the last response for usage and timings; it must not
//! validate or decide on retries (the loop does).

use crate::compiled_call::CompiledCall;
use crate::error::EngineError;
use crate::session::{CallRequest, CallResponse, Sampling, Session};
use toolgram_core::define::request::{Mode, Think};
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_retry::{AttemptError, CallModel, ModelReply, Usage};

/// A session plus everything about the request but the messages.
pub struct EngineModel<'s, 'e> {
    /// The session the attempts run in.
    pub session: &'s mut Session<'e>,
    /// The tool pool.
    pub tools: &'s ToolSet,
    /// Which calls may or must be made.
    pub choice: ToolChoice,
    /// Whether several calls may be made.
    pub parallel: bool,
    /// How much of the call the grammar enforces.
    pub mode: Mode,
    /// Whether a `<think>` block may or must open the reply.
    pub think: Think,
    /// Prompt mode's instructions in every mode ([`CallRequest::few_shot`]).
    pub few_shot: bool,
    /// Sampling settings.
    pub sampling: Sampling,
    /// The JSON Schema a reply without calls must match ([`CallRequest::answer`]).
    pub answer: Option<serde_json::Value>,
    /// The call grammar compiled for this request before it reached the engine, read by
    /// every attempt of its shape ([`CallRequest::compiled`]).
    pub compiled: Option<&'s CompiledCall>,
    /// The last engine response (usage, timings, deferred keywords).
    pub last: Option<CallResponse>,
    /// Tokens over all attempts: (prompt, completion).
    pub total_tokens: (usize, usize),
}

impl CallModel for EngineModel<'_, '_> {
    type Error = EngineError;

    fn attempt(
        &mut self,
        messages: &[ChatMessage],
    ) -> Result<ModelReply, AttemptError<EngineError>> {
        let req = CallRequest {
            messages,
            tools: self.tools,
            choice: self.choice.clone(),
            parallel: self.parallel,
            mode: self.mode,
            think: self.think,
            few_shot: self.few_shot,
            sampling: self.sampling.clone(),
            answer: self.answer.clone(),
            compiled: self.compiled,
        };
        match self.session.reply(&req) {
            Ok(r) => {
                self.total_tokens.0 += r.prompt_tokens;
                self.total_tokens.1 += r.completion_tokens;
                let reply = ModelReply {
                    reasoning_content: r.reasoning_content.clone(),
                    content: r.content.clone(),
                    tool_calls: r.tool_calls.clone(),
                    raw: r.raw.clone(),
                    usage: Some(Usage {
                        prompt_tokens: r.prompt_tokens,
                        completion_tokens: r.completion_tokens,
                        cached_prompt_tokens: r
                            .prompt_tokens
                            .saturating_sub(r.timings.prompt_evaluated),
                    }),
                };
                self.last = Some(r);
                Ok(reply)
            }
            Err(EngineError::Unreadable { raw, message }) => {
                Err(AttemptError::Unreadable { raw, message })
            }
            Err(e) => Err(AttemptError::Fatal(e)),
        }
    }
}
