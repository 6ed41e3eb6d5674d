//! The define stage: what a request is made of, and the types and policies every later stage
//! shares.
//!
//! - [`tool`] — [`tool::Tool`], the checked pool [`tool::ToolSet`], [`tool::ToolChoice`],
//!   [`tool::ToolCall`]; a tool set is checked in full when it is read.
//! - [`read_tools`] — a tools document read into a `ToolSet`.
//! - [`custom_tool`] — OpenAI's grammar ("custom") tools read into the same `Tool`.
//! - [`rules`] — custom argument rules (`x-toolgram.rules`), read with the tool.
//! - [`arguments`] — the argument-schema policy: closed objects, and the validator that checks
//!   arguments after parsing.
//! - [`message`] — OpenAI-style chat messages.
//! - [`request`] — [`request::Mode`] and [`request::Think`], the request options every stage
//!   reads.
//! - [`reply`] — [`reply::FinishReason`] and [`reply::Usage`], what every reply reports beside
//!   its text and calls.
//!
//! This module must not compile tool pools into grammars, know call syntaxes or parse model
//! text (a grammar tool's Lark is only read, to refuse a bad one when the tool set is read).

pub mod arguments;
pub mod custom_tool;
pub mod message;
pub mod read_tools;
pub mod reply;
pub mod request;
pub mod rules;
pub mod tool;
