//! OpenAI's Chat Completions:
//!
//! - [`envelope`] — the token limit's keys.
//! - [`tools`] — its tool items read into core [`toolgram_core::Tool`]s (the Responses API's
//!   flat function shape too, which the same reader takes) and written; `tool_choice` read
//!   (either API's spelling) and written.
//! - [`messages`] — `messages` read into chat messages and written from them.
//! - [`reply`] — the assistant message, its calls, the usage object and the
//!   `chat.completion` written; a reply's text, calls and usage read.
//! - [`stream`] — `chat.completion.chunk`s written, and joined back into a reply.
//!
//! This module must not hold a server's limits or a provider's request policy.

pub mod envelope;
pub mod messages;
pub mod reply;
pub mod stream;
pub mod tools;
