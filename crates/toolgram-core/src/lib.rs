//! # toolgram-core — define, compile, parse and validate tool calls
//!
//! The pure heart of toolgram: no I/O, no model. A [`ToolSet`] is read from OpenAI-style
//! function definitions and checked at once (tool name + JSON pointer on any error);
//! [`compile`] turns the pool, a [`ToolChoice`] and a model family's [`CallSyntax`] into ONE
//! grammar (a discriminated union: the name picks the argument schema), built once and
//! written as llguidance Lark ([`compile::compile`]) or as IR for GBNF and OpenAI Lark
//! ([`compile::ir::compile_ir`]); [`parse::parse_output`] reads the text the grammar produced back into typed
//! [`ToolCall`]s with the same syntax declaration; [`validate`] checks arguments against the
//! tool's JSON Schema; [`template`] reads the call syntax a chat template speaks from what it
//! renders (probed against the [`syntax`] registry, or derived). (The same schemas in the JSON-Schema subsets of providers are
//! `toolgram-providers`' `profile` module.)
//!
//! ```
//! use toolgram_core::{compile, parse, syntax, ToolChoice, ToolSet};
//!
//! let tools = ToolSet::from_json_str(r#"[{"type": "function", "function": {
//!     "name": "get_weather",
//!     "parameters": {"type": "object",
//!                    "properties": {"city": {"type": "string"}},
//!                    "required": ["city"]}}}]"#)?;
//! let hermes = syntax::by_name("hermes").expect("hermes is registered");
//! let plan = compile::compile(&tools, &ToolChoice::Required, false, hermes, &Default::default())?;
//! assert!(plan.lark.contains("get_weather"));
//!
//! let out = parse::parse_output(
//!     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
//!     hermes, &tools, &plan.choice)?;
//! assert_eq!(out.tool_calls[0].name, "get_weather");
//! assert_eq!(out.tool_calls[0].arguments["city"], "Paris");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This crate must not load models, touch the network or the file system: those live in
//! `toolgram-engine` and the CLI.

pub mod compile;
pub mod define;
pub mod error;
pub mod parse;
pub mod syntax;
pub mod template;
pub mod validate;

pub use define::message::{ChatMessage, MessageToolCall};
pub use define::tool::{InputCheck, Tool, ToolCall, ToolChoice, ToolSet};
pub use error::{CompileError, DefinitionError, ParseError};
pub use syntax::CallSyntax;
