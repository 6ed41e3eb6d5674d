//! toolgram-wire: each HTTP API's JSON in one home, both directions — what toolgram's server
//! reads from its clients and writes back, and what its providers send to a remote API and
//! read from it, for the same API in the same module. A mapping written once serves both
//! sides, and a test can run one direction into the other.
//!
//! - [`call`] — the reply every API writes: a validated [`Call`] (a function's arguments or a
//!   grammar tool's input) and [`Reply`], a finished reply's text, reasoning, calls, finish
//!   reason and usage.
//! - [`error`] — [`WireError`]: a field that cannot be read, named by its path.
//! - [`read`] — the pieces every reply reader uses: a call from its id or its place, arguments
//!   sent as a JSON string, a token count at a pointer.
//! - [`chat`] — OpenAI Chat Completions: messages, tools (Responses' flat function shape read
//!   too) and `tool_choice`, the `chat.completion` and its assistant message, usage, and the
//!   `chat.completion.chunk` stream, each read and written.
//! - [`responses`] — OpenAI Responses: `input` items, flat tools and `tool_choice`, output
//!   items and the `response` object, the numbered event stream, each read and written.
//! - [`anthropic`] — Anthropic Messages: `system` and messages, tools and `tool_choice`, the
//!   `message` reply and its content blocks, usage, error bodies, and the SSE frames, each read
//!   and written.
//! - [`gemini`] — Gemini's `generateContent` (the provider's side only: toolgram serves no
//!   Gemini API): contents, function declarations, calling modes, `generationConfig`, a
//!   reply's text, calls and usage, and its stream joined.
//! - [`ollama`] — Ollama's `/api/chat` (the provider's side only): `options`, a reply's
//!   message, calls and usage, and its JSON-line stream joined.
//!
//! This crate must not send or receive HTTP, run a model, or hold a server's or a provider's
//! policy (limits, defaults, which fields a server honours): callers decide those and pass
//! what they decided.

pub mod anthropic;
mod append;
pub mod call;
pub mod chat;
pub mod error;
#[cfg(test)]
mod fixtures;
pub mod gemini;
pub mod ollama;
pub mod read;
pub mod responses;

pub use call::{Call, CallKind, Reply};
pub use error::WireError;
