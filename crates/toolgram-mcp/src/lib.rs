//! # toolgram-mcp — tools from Model Context Protocol servers
//!
//! The run stage's tool source: MCP servers started from a command line the operator gives
//! (stdio, with the official Rust SDK `rmcp`), their tools listed (every page) and read into
//! core [`toolgram_core::Tool`]s by the same reader as any function's (`inputSchema` as its
//! parameters), a call sent to the server that listed its tool, and its result read: the text
//! the model sees, `isError`, and `structuredContent` checked against the tool's
//! `outputSchema` where it gives one. A server that cannot start, exits or does not answer
//! within the timeout is a typed [`McpError`], never a hung request; a server's
//! `notifications/tools/list_changed` marks its list to be read again before the next step.
//!
//! The API is blocking: the SDK's async client runs on a small runtime of this crate's own.
//! This crate must not decode, decide when to call, or loop: the run stage does
//! (`toolgram-runtime`'s tool loop).

mod error;
mod result;
mod server;
mod sources;

pub use error::McpError;
pub use result::ToolResult;
pub use sources::{SourceTool, ToolSources};
