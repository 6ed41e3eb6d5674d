//! The embedded engine as a [`CallModel`] for `toolgram-retry`'s loop: each attempt is one
//! [`Session::reply`] on the conversation so far (the KV cache keeps the shared prefix).
//!
//! It adapts errors and keeps the last response for usage and timings; it must not
//! validate or decide on retries (the loop does).

use crate::error::EngineError;
use crate::session::{CallRequest, CallResponse, Session};
use toolgram_core::ChatMessage;
use toolgram_retry::{AttemptError, CallModel, ModelReply, Usage};

/// A session and the request every attempt makes but its messages: one [`CallRequest`],
/// each attempt the same request on the conversation so far.
pub struct EngineModel<'s, 'e> {
    /// The session the attempts run in.
    pub session: &'s mut Session<'e>,
    /// The request, its `messages` replaced by each attempt's.
    pub request: CallRequest<'s>,
    /// The last engine response (usage, timings, deferred keywords).
    pub last: Option<CallResponse>,
    /// Tokens over all attempts: (prompt, completion).
    pub total_tokens: (usize, usize),
}

impl<'s, 'e> EngineModel<'s, 'e> {
    /// `request`'s attempts on `session`, none made yet.
    pub fn new(session: &'s mut Session<'e>, request: CallRequest<'s>) -> Self {
        Self {
            session,
            request,
            last: None,
            total_tokens: (0, 0),
        }
    }
}

impl CallModel for EngineModel<'_, '_> {
    type Error = EngineError;

    fn attempt(
        &mut self,
        messages: &[ChatMessage],
    ) -> Result<ModelReply, AttemptError<EngineError>> {
        let req = CallRequest {
            messages,
            ..self.request.clone()
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
