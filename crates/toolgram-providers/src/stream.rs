//! Streamed replies (server-sent events, or Ollama's JSON lines) assembled into the same
//! body a non-streamed request returns, so one reader ([`crate::read_reply`]) serves both:
//! the stream split into its JSON payloads here, joined by the provider's dialect (OpenAI-style
//! `choices[].delta`, Anthropic `content_block_*` events, Gemini chunks, the Responses API's
//! `response.completed` event, Ollama's `message` chunks). Assembly only: it must not
//! interpret calls.

use crate::error::ProviderError;
use crate::spec::Kind;
use serde_json::Value;

/// A stream `kind` sent that is not its documented shape.
pub(crate) fn bad(kind: Kind, m: impl Into<String>) -> ProviderError {
    ProviderError::Reply {
        provider: kind.name().to_owned(),
        message: m.into(),
    }
}

/// The JSON payloads of a stream, in order (`data:` lines of SSE, or bare JSON lines).
fn payloads(kind: Kind, text: &str) -> Result<Vec<Value>, ProviderError> {
    text.lines()
        .map(str::trim)
        .filter_map(|l| match l.strip_prefix("data:") {
            Some(d) => Some(d.trim()),
            None if l.starts_with('{') => Some(l),
            None => None,
        })
        .filter(|d| !d.is_empty() && *d != "[DONE]")
        .map(|d| {
            serde_json::from_str(d).map_err(|e| bad(kind, format!("stream chunk is not JSON: {e}")))
        })
        .collect()
}

/// Assemble a streamed reply into the provider's non-streamed reply body.
pub fn assemble(kind: Kind, text: &str) -> Result<Value, ProviderError> {
    let chunks = payloads(kind, text)?;
    kind.dialect.assemble(kind, &chunks)
}
