//! OpenAI's Responses API, both directions: what `toolgram serve` reads from a Responses client
//! (coding agents: Codex) and writes back, and what the `openai-responses` provider sends and
//! reads.
//!
//! - [`envelope`] — the token limit's key, `text.format`, `reasoning.effort`.
//! - [`input`] — `input` items read into chat messages (and the tools of `additional_tools`
//!   items), and written from them.
//! - [`tools`] — flat function and custom tools and `tool_choice`, written (read by
//!   [`crate::chat::tools`], which takes both OpenAI shapes).
//! - [`reply`] — output items and the `response` object written; a reply's text, calls and
//!   usage read.
//! - [`stream`] — the numbered event sequence written ([`stream::ResponseStream`]), and the
//!   reply read back from `response.completed`.
//! - [`mcp`] — the hosted MCP tool's items and events, written; approvals read.
//! - [`encrypted`] — the reasoning a reply carries in `encrypted_content`.
//!
//! This module must not touch HTTP, store responses or hold a server's limits.

pub mod encrypted;
pub mod envelope;
pub mod input;
pub mod mcp;
pub mod reply;
pub mod stream;
pub mod tools;
