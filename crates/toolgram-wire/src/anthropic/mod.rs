//! Anthropic Messages, both directions: what `toolgram serve` reads from a Messages client and
//! writes back, and what the `anthropic` provider sends to api.anthropic.com and reads from it.
//!
//! - [`envelope`] — the token limit's key, `stop_sequences`, `thinking`, the output format's
//!   place.
//! - [`messages`] — `system` and `messages` read into chat messages, and written from them.
//! - [`tools`] — a tool item read into a `Tool` and written from a profiled schema;
//!   `tool_choice` (with `disable_parallel_tool_use`) read and written.
//! - [`mcp`] — the MCP connector's `mcp_tool_use` and `mcp_tool_result` blocks, written.
//! - [`reply`] — the `message` object and its content blocks, `stop_reason`, usage and error
//!   bodies written; a reply's text, `tool_use` calls and usage read.
//! - [`stream`] — the SSE frames of a streamed reply written ([`stream::MessageStream`]), and
//!   frames assembled back into a reply's content.
//!
//! This module must not touch HTTP, hold the server's limits or the provider's URL and key.

pub mod envelope;
pub mod mcp;
pub mod messages;
pub mod reply;
pub mod stream;
pub mod tools;
