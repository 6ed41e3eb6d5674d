//! What a provider is: the [`ProviderSpec`] trait each file under `providers/` implements (its
//! names, default base URL, key variable and auth header, documented capabilities, how it
//! renders a request and reads a reply, its usage and its stream), and the types that trait
//! speaks in. Declarations only: no provider is named here, and nothing is sent or read.

use crate::error::ProviderError;
use serde_json::Value;
use toolgram_core::define::request::Path;
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};
use toolgram_retry::ModelReply;

/// A registered provider: its spec, as the registry ([`crate::REGISTRY`]) holds it.
pub type Kind = &'static dyn ProviderSpec;

/// What a provider can enforce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Takes a grammar for the whole reply.
    pub grammar: bool,
    /// Enforces a JSON Schema (strict function tools or structured output).
    pub strict_json: bool,
}

/// How a provider is sent its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer KEY`.
    Bearer,
    /// The key in a header of its own, with fixed headers sent beside it.
    Header {
        /// The header holding the key.
        name: &'static str,
        /// Headers sent with it (name, value), in order.
        extra: &'static [(&'static str, &'static str)],
    },
}

/// Everything a request is made of.
pub struct RenderInput<'a> {
    /// The provider.
    pub kind: Kind,
    /// The conversation, OpenAI-shaped.
    pub messages: &'a [ChatMessage],
    /// The pool.
    pub tools: &'a ToolSet,
    /// Which calls may or must be made.
    pub choice: &'a ToolChoice,
    /// Whether several calls may be made.
    pub parallel: bool,
    /// The model id, if the provider wants it in the body.
    pub model: Option<&'a str>,
    /// The path chosen.
    pub path: Path,
    /// The call syntax of the grammar and prompt paths (the model's own).
    pub syntax: &'static CallSyntax,
    /// Sampling temperature (`None`: the provider's default).
    pub temperature: Option<f32>,
    /// Most tokens to generate (`None`: the provider's default; Anthropic requires one, 1024).
    pub max_tokens: Option<usize>,
    /// Ask for a streamed reply (server-sent events; assembled by [`crate::assemble`]).
    pub stream: bool,
}

/// Why a reply could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The model's text is not a readable call: worth telling the model.
    Unreadable {
        /// What it wrote.
        raw: String,
        /// What was wrong.
        message: String,
    },
    /// The provider's envelope is not its documented shape.
    Shape(ProviderError),
}

impl ReadError {
    /// `kind`'s reply is not its documented shape.
    pub(crate) fn shape(kind: &dyn ProviderSpec, message: impl Into<String>) -> Self {
        Self::Shape(ProviderError::Reply {
            provider: kind.name().to_owned(),
            message: message.into(),
        })
    }

    /// A reply `body` whose calls cannot be read.
    pub(crate) fn body(body: &Value, message: String) -> Self {
        Self::Unreadable {
            raw: body.to_string(),
            message,
        }
    }
}

/// A provider as data: its names, where its API lives, how it is sent its key and what it
/// can enforce. Each provider's file declares one row; its code is only what differs.
#[derive(Debug, Clone, Copy)]
pub struct ProviderInfo {
    /// Its CLI/config name.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// Where its API lives unless a base URL is given.
    pub default_base_url: &'static str,
    /// The environment variable its key is read from unless another is named.
    pub api_key_env: Option<&'static str>,
    /// How its key is sent.
    pub auth: Auth,
    /// The documented capabilities of its API.
    pub capabilities: Capabilities,
}

impl ProviderInfo {
    /// A server on this machine that needs no key, at `default_base_url`.
    pub const fn local(
        name: &'static str,
        default_base_url: &'static str,
        capabilities: Capabilities,
    ) -> Self {
        Self {
            name,
            aliases: &[],
            default_base_url,
            api_key_env: None,
            auth: Auth::Bearer,
            capabilities,
        }
    }
}

/// Everything particular to one provider. Each implementation lives in one file under
/// `providers/` and is listed by one line of [`crate::REGISTRY`]; the wire shapes several
/// providers share are in `dialect/`.
pub trait ProviderSpec: std::fmt::Debug + Sync {
    /// Its row: names, default base URL, key variable and auth, capabilities.
    fn info(&self) -> &ProviderInfo;
    /// Its CLI/config name.
    fn name(&self) -> &'static str {
        self.info().name
    }
    /// Other names it answers to.
    fn aliases(&self) -> &'static [&'static str] {
        self.info().aliases
    }
    /// Where its API lives unless a base URL is given.
    fn default_base_url(&self) -> &'static str {
        self.info().default_base_url
    }
    /// The environment variable its key is read from unless another is named.
    fn api_key_env(&self) -> Option<&'static str> {
        self.info().api_key_env
    }
    /// How its key is sent.
    fn auth(&self) -> Auth {
        self.info().auth
    }
    /// The documented capabilities of its API.
    fn capabilities(&self) -> Capabilities {
        self.info().capabilities
    }
    /// The request for `input.path` over `pool` (the callable subset of `input.tools`): the
    /// part of the URL after the base URL, and the body. A path it does not take is
    /// [`ProviderError::Unsupported`].
    fn request(
        &self,
        input: &RenderInput,
        pool: &ToolSet,
        notes: &mut Vec<String>,
    ) -> Result<(String, Value), ProviderError>;
    /// A strict-JSON-path reply read into calls (`text` is [`ReplyShape::reply_text`]'s).
    fn strict_calls(
        &self,
        text: String,
        body: &Value,
        tools: &ToolSet,
    ) -> Result<ModelReply, ReadError>;
    /// How its reply bodies are read (a shape of `dialect/` when it speaks one several
    /// providers share).
    fn replies(&self) -> &'static dyn ReplyShape;
}

/// How a provider's reply bodies are read: text, native calls, usage, and a stream assembled
/// into one body. Providers that speak the same wire shape share one implementation.
pub trait ReplyShape: Sync {
    /// The assistant's text in a reply body of `kind`.
    fn reply_text(&self, kind: &dyn ProviderSpec, body: &Value) -> Result<String, ReadError>;
    /// The native tool calls in a reply body (empty when it holds text only).
    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError>;
    /// The token counts a reply body reports, in its own field names: prompt (cached tokens
    /// included), completion, cached prompt. It must not estimate.
    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>);
    /// A stream's JSON payloads, in order, assembled into the body a non-streamed request
    /// returns.
    fn assemble(&self, chunks: &[Value]) -> Result<Value, ProviderError>;
}
