//! Providers: one toolgram tool set rendered in each provider's native request shape, one
//! row of data per provider in [`REGISTRY`] (`openai-chat`, `openai-responses`, `anthropic`,
//! `gemini`, `llama-server`, `vllm`, `sglang`, `ollama`) and one file per wire shape under
//! `dialect/`; capability gating with the explicit fallback
//! chain grammar → strict JSON Schema → prompt-based, replies parsed into toolgram's one
//! `ToolCall` type, and the HTTP round trip.
//!
//! # Contents
//!
//! | module | what it holds |
//! |---|---|
//! | `spec` | what a provider is: its [`ProviderInfo`] row (names, default base URL, key variable, auth, [`Dialect`], [`Strict`] path, grammar field; capabilities follow) and the [`Dialect`] trait |
//! | `providers` | [`REGISTRY`]: the table of rows, [`lookup`], [`names`] |
//! | `dialect` | one file per wire shape: `openai_chat` (Chat Completions), `openai_responses`, `anthropic` (Messages), `gemini` (`generateContent`), `ollama` (`/api/chat`), `json_object` (the `{"call": …}` reply under a response schema); the pieces they share (`request`, `reply`) |
//! | [`profile`] | one tool's JSON Schema in each provider's subset (OpenAI strict, Anthropic, Gemini), keyword by keyword |
//! | `render` | the callable pool, and each path's body from the row and its dialect; [`render()`] |
//! | `capability` | [`choose_path`]: grammar → strict JSON → prompt, with the reason |
//! | `reply`, `usage`, `stream` | replies read into calls ([`read_reply`]), token counts ([`read_usage`]), streams assembled ([`assemble`]) |
//! | `http`, `provider`, `model` | the round trip with retries ([`post_json`]), the [`Provider`] trait and its [`Endpoint`], [`ProviderModel`] under the retry loop |
//! | `config`, `error` | `toolgram.toml` entries and overrides ([`Config`]); [`ProviderError`] |
//!
//! Schemas go out through the provider profiles ([`profile`]: one tool's JSON Schema in each
//! provider's subset, nothing dropped silently) and grammars through core's compilers;
//! prompt-based replies are read by core's lenient parser and validated by the retry loop
//! (`toolgram-retry`), which [`ProviderModel`] drives. This crate must not link a model or
//! re-implement any of those.

mod capability;
mod config;
mod dialect;
mod error;
mod http;
mod model;
pub mod profile;
mod provider;
mod providers;
mod render;
mod reply;
mod spec;
mod stream;
mod usage;

pub use capability::choose_path;
pub use config::{Config, Fallback, Overrides, ProviderConfig, Resolved};
pub use dialect::openai_chat::native_body as native_chat_body;
pub use error::ProviderError;
pub use http::{HttpOptions, post_json};
pub use model::{LiveReply, ProviderModel};
pub use provider::{Endpoint, Provider, endpoint_url};
pub use providers::{REGISTRY, lookup, names};
pub use render::{RenderPlan, Rendered, render, render_planned};
pub use reply::read_reply;
pub use spec::{
    Auth, Body, Capabilities, Dialect, Kind, ProviderInfo, ReadError, RenderInput, Strict,
};
pub use stream::assemble;
pub use usage::read_usage;
