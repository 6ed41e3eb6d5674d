//! What a provider is: a [`ProviderInfo`] row (its names, default base URL, key variable and
//! auth header, the [`Dialect`] it speaks, its strict path and grammar field, from which its
//! capabilities follow), the [`Dialect`] trait each wire shape under `dialect/` implements
//! (request bodies, reply text and calls, usage, stream assembly), and the types they speak
//! in. Declarations only: no provider or dialect is named here, and nothing is sent or read.

use crate::error::ProviderError;
use crate::profile::Profile;
use serde_json::Value;
use toolgram_core::define::request::{CallShape, Path};
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ChatMessage, ToolCall, ToolSet};

/// A registered provider: its row of the registry ([`crate::REGISTRY`]).
pub type Kind = &'static ProviderInfo;

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
    /// What the call grammar is compiled for: the choice, parallel calls, the plan and the
    /// bound on calls (the grammar path compiles all of it into its GBNF; the other paths
    /// send the choice and parallel calls).
    pub shape: &'a CallShape,
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
    pub(crate) fn shape(kind: Kind, message: impl Into<String>) -> Self {
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

/// A request body, or why it cannot be built.
pub type Body = Result<Value, ProviderError>;

/// A provider's strict-JSON path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strict {
    /// Its dialect's strict function tools.
    Tools,
    /// The reply is one JSON object under the call union's schema, sent in this request field
    /// (`dialect::json_object`).
    ResponseSchema(&'static str),
}

/// A provider as data: its names, where its API lives, how it is sent its key, the wire
/// dialect it speaks and which paths it takes. The registry ([`crate::REGISTRY`]) is a table
/// of these; the code is the dialects' (`dialect/`), one per wire shape.
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
    /// The wire shape of its requests and replies.
    pub dialect: &'static dyn Dialect,
    /// Its strict-JSON path (`None`: it has none).
    pub strict: Option<Strict>,
    /// The request field our GBNF for the whole reply goes in, outermost key first (`None`:
    /// it takes no whole-reply grammar).
    pub grammar_field: Option<&'static [&'static str]>,
}

impl ProviderInfo {
    /// A server on this machine that needs no key, at `default_base_url`, speaking `dialect`,
    /// with neither a strict path nor a grammar until [`Self::with_strict`]/[`Self::with_grammar`].
    pub const fn local(
        name: &'static str,
        default_base_url: &'static str,
        dialect: &'static dyn Dialect,
    ) -> Self {
        Self {
            name,
            aliases: &[],
            default_base_url,
            api_key_env: None,
            auth: Auth::Bearer,
            dialect,
            strict: None,
            grammar_field: None,
        }
    }

    /// A hosted API at `default_base_url`, its key read from `api_key_env` and sent by `auth`.
    pub const fn hosted(
        name: &'static str,
        default_base_url: &'static str,
        api_key_env: &'static str,
        auth: Auth,
        dialect: &'static dyn Dialect,
    ) -> Self {
        Self {
            api_key_env: Some(api_key_env),
            auth,
            ..Self::local(name, default_base_url, dialect)
        }
    }

    /// With other names.
    pub const fn with_aliases(self, aliases: &'static [&'static str]) -> Self {
        Self { aliases, ..self }
    }

    /// With a strict-JSON path.
    pub const fn with_strict(self, strict: Strict) -> Self {
        Self {
            strict: Some(strict),
            ..self
        }
    }

    /// Taking our GBNF for the whole reply in `field` (outermost key first).
    pub const fn with_grammar(self, field: &'static [&'static str]) -> Self {
        Self {
            grammar_field: Some(field),
            ..self
        }
    }

    /// Its CLI/config name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Where its API lives unless a base URL is given.
    pub fn default_base_url(&self) -> &'static str {
        self.default_base_url
    }

    /// The environment variable its key is read from unless another is named.
    pub fn api_key_env(&self) -> Option<&'static str> {
        self.api_key_env
    }

    /// How its key is sent.
    pub fn auth(&self) -> Auth {
        self.auth
    }

    /// What its API can enforce, as its row says: a grammar field, a strict path.
    pub fn capabilities(&self) -> Capabilities {
        Capabilities {
            grammar: self.grammar_field.is_some(),
            strict_json: self.strict.is_some(),
        }
    }
}

/// A wire shape: how requests in it are built and its replies read. One implementation per
/// API shape under `dialect/`, shared by every provider that speaks it; what differs between
/// those providers is data in their [`ProviderInfo`] rows.
pub trait Dialect: std::fmt::Debug + Sync {
    /// The profile its strict tools' schemas are rendered in (and their calls restored from).
    fn profile(&self) -> Profile;
    /// The prompt path's body: the tools and example calls in a system text, nothing enforced.
    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value;
    /// The strict path's body with strict function tools.
    fn strict_tools(&self, input: &RenderInput, pool: &ToolSet, notes: &mut Vec<String>) -> Body {
        let _ = (pool, notes);
        Err(unsupported_here(input, "strict function tools"))
    }
    /// The grammar path's body for the callable `pool`; the caller puts our GBNF in its
    /// provider's field.
    fn grammar(&self, input: &RenderInput, pool: &ToolSet) -> Body {
        let _ = pool;
        Err(unsupported_here(input, "a grammar for the whole reply"))
    }
    /// The fields every path sends (model, sampling, token limit, streaming) added to `body`,
    /// and the part of the URL after the base URL.
    fn finish(&self, input: &RenderInput, body: &mut Value) -> String;
    /// The assistant's text in a reply body of `kind`.
    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError>;
    /// The native tool calls in a reply body (empty when it holds text only).
    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError>;
    /// The token counts a reply body reports, in its own field names: prompt (cached tokens
    /// included), completion, cached prompt. It must not estimate.
    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>);
    /// A stream's JSON payloads from `kind`, in order, assembled into the body a non-streamed
    /// request returns.
    fn assemble(&self, kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError>;
    /// The text one stream payload adds to the reply's content, for a reply read as it
    /// arrives (the grammar path's text); `""` where it adds none. A dialect without a grammar
    /// path reads its streams only whole.
    fn text_delta<'c>(&self, chunk: &'c Value) -> &'c str {
        let _ = chunk;
        ""
    }
}

/// The error for a row that asks its dialect for a request shape the dialect does not have.
fn unsupported_here(input: &RenderInput, what: &str) -> ProviderError {
    ProviderError::Unsupported(format!(
        "{} ({:?}) takes no {what}",
        input.kind.name, input.kind.dialect
    ))
}
