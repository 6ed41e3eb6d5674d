//! Providers: one toolgram tool set rendered in each provider's native request shape
//! (`openai-chat`, `openai-responses`, `anthropic`, `gemini`, `llama-server`, `vllm`,
//! `sglang`, `ollama`), capability gating with the explicit fallback chain grammar → strict
//! JSON Schema → prompt-based, replies parsed into toolgram's one `ToolCall` type, and the
//! HTTP round trip.
//!
//! Schemas go out through the provider profiles ([`profile`]: one tool's JSON Schema in each
//! provider's subset, nothing dropped silently) and grammars through core's compilers;
//! prompt-based replies are read by core's lenient parser and validated by the retry loop
//! (`toolgram-retry`), which [`ProviderModel`] drives. This crate must not link a model or
//! re-implement any of those.

mod capability;
mod config;
mod error;
mod http;
mod model;
pub mod profile;
mod provider;
mod render;
mod reply;
mod stream;
mod usage;

pub use capability::{Capabilities, Kind, choose_path};
pub use config::{Config, Fallback, Overrides, ProviderConfig, Resolved};
pub use error::ProviderError;
pub use http::{HttpOptions, post_json};
pub use model::ProviderModel;
pub use provider::{Endpoint, Provider};
pub use render::{RenderInput, Rendered, render};
pub use reply::{ReadError, read_reply};
pub use stream::assemble;
pub use usage::read_usage;
