//! # toolgram-retry — validate, feed the error back, try again
//!
//! A grammar guarantees syntax, not sense; prompt-based replies guarantee nothing. [`run`]
//! asks a model (anything implementing [`CallModel`]: the embedded engine, a provider) for a
//! reply, checks every call with the core validator and the `tool_choice`, and on failure
//! appends the reply and a precise error (a `role: tool` message per call, or a `user` note
//! when the reply could not be read as calls at all) and asks again, within
//! [`RetryPolicy::max_attempts`]. [`RetryPolicy::consecutive_blocked`] stops a model that
//! keeps making the same mistake. Every attempt is recorded.
//!
//! This crate must not load models, parse model text or touch the network: models parse
//! their own output (with the core parsers) and report it through [`CallModel`]. It never
//! returns an invalid call as valid: the result is a validated reply or a [`RetryError`].

mod feedback;
mod reply;

pub use feedback::{feedback_messages, reply_problems};
pub use reply::{ModelReply, Usage};

use toolgram_core::{ChatMessage, ToolChoice, ToolSet};

/// Why an attempt gave no reply.
#[derive(Debug)]
pub enum AttemptError<E> {
    /// The text could not be read as calls (malformed, unknown tool, …); the model may
    /// try again after being told `message`.
    Unreadable {
        /// What the model wrote.
        raw: String,
        /// What was wrong, written for the model.
        message: String,
    },
    /// The model could not run (engine error, network, context overflow): no retry.
    Fatal(E),
}

/// A model the loop can drive.
pub trait CallModel {
    /// The model's own error type.
    type Error;
    /// One reply to the conversation `messages`.
    fn attempt(
        &mut self,
        messages: &[ChatMessage],
    ) -> Result<ModelReply, AttemptError<Self::Error>>;
}

/// How hard to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Most attempts in all (the first one included); at least 1.
    pub max_attempts: usize,
    /// Stop early when this many consecutive attempts fail with the same errors.
    pub consecutive_blocked: usize,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            consecutive_blocked: 2,
        }
    }
}

/// One failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedAttempt {
    /// 1-based attempt number.
    pub attempt: usize,
    /// What the model wrote.
    pub raw: String,
    /// Every problem found, written for the model.
    pub errors: Vec<String>,
    /// The reply was read (as text and calls) and failed validation; `false` when it could
    /// not be read at all.
    pub readable: bool,
}

/// A validated reply and the attempts it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The accepted reply: every call is valid for its tool and the tool choice.
    pub reply: ModelReply,
    /// Attempts made, the successful one included.
    pub attempts: usize,
    /// The attempts that failed, in order.
    pub failed: Vec<FailedAttempt>,
    /// Tokens over every attempt that produced a reply; `None` when none was counted.
    pub usage: Option<Usage>,
}

/// The loop ended without a valid reply.
#[derive(Debug, thiserror::Error)]
pub enum RetryError<E: std::fmt::Display> {
    /// Every attempt in the budget failed.
    #[error("no valid reply in {} attempt(s); last: {}", .failed.len(), last_errors(.failed))]
    Exhausted {
        /// The failed attempts.
        failed: Vec<FailedAttempt>,
    },
    /// The model repeated the same mistake `consecutive_blocked` times in a row.
    #[error("stopped after {} attempt(s): the same error repeated: {}", .failed.len(), last_errors(.failed))]
    Blocked {
        /// The failed attempts.
        failed: Vec<FailedAttempt>,
    },
    /// The model could not run.
    #[error("{error}")]
    Model {
        /// The model's error.
        error: E,
        /// Attempts that failed before it.
        failed: Vec<FailedAttempt>,
    },
}

impl<E: std::fmt::Display> RetryError<E> {
    /// The failed attempts before the loop ended.
    pub fn failed(&self) -> &[FailedAttempt] {
        match self {
            Self::Exhausted { failed } | Self::Blocked { failed } | Self::Model { failed, .. } => {
                failed
            }
        }
    }
}

fn last_errors(failed: &[FailedAttempt]) -> String {
    failed
        .last()
        .map(|f| f.errors.join("; "))
        .unwrap_or_default()
}

/// Ask `model` until its reply passes validation against `tools` and `choice`, feeding each
/// failure back into the conversation.
pub fn run<M: CallModel>(
    model: &mut M,
    tools: &ToolSet,
    choice: &ToolChoice,
    messages: &[ChatMessage],
    policy: RetryPolicy,
) -> Result<Outcome, RetryError<M::Error>>
where
    M::Error: std::fmt::Display,
{
    let mut conversation = messages.to_vec();
    let mut failed: Vec<FailedAttempt> = Vec::new();
    let mut usage: Option<Usage> = None;
    let budget = policy.max_attempts.max(1);
    for attempt in 1..=budget {
        let (raw, errors, feedback, readable) = match model.attempt(&conversation) {
            Ok(reply) => {
                if let Some(u) = reply.usage {
                    *usage.get_or_insert_default() += u;
                }
                let problems = reply_problems(tools, choice, &reply);
                if problems.iter().all(Vec::is_empty) {
                    return Ok(Outcome {
                        reply,
                        attempts: attempt,
                        failed,
                        usage,
                    });
                }
                let feedback = feedback_messages(attempt, &reply, &problems);
                let errors = problems.into_iter().flatten().collect();
                (reply.raw, errors, feedback, true)
            }
            Err(AttemptError::Unreadable { raw, message }) => {
                let feedback = feedback::unreadable_messages(&raw, &message);
                (raw, vec![message], feedback, false)
            }
            Err(AttemptError::Fatal(error)) => return Err(RetryError::Model { error, failed }),
        };
        conversation.extend(feedback);
        failed.push(FailedAttempt {
            attempt,
            raw,
            errors,
            readable,
        });
        let cap = policy.consecutive_blocked.max(1);
        let repeating = failed.len() >= cap
            && failed[failed.len() - cap..]
                .windows(2)
                .all(|w| w[0].errors == w[1].errors);
        if cap > 1 && repeating && attempt < budget {
            return Err(RetryError::Blocked { failed });
        }
    }
    Err(RetryError::Exhausted { failed })
}

#[cfg(test)]
mod tests;
