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
    text.lines().filter_map(|l| payload(kind, l)).collect()
}

/// The JSON payload of one line of a stream: a `data:` line of SSE or a bare JSON line;
/// `None` for any other line (events' names, comments, blank lines, `[DONE]`).
pub(crate) fn payload(kind: Kind, line: &str) -> Option<Result<Value, ProviderError>> {
    let line = line.trim();
    let data = match line.strip_prefix("data:") {
        Some(d) => d.trim(),
        None if line.starts_with('{') => line,
        None => return None,
    };
    (!data.is_empty() && data != "[DONE]").then(|| {
        serde_json::from_str(data).map_err(|e| bad(kind, format!("stream chunk is not JSON: {e}")))
    })
}

/// The text of a stream's `line` adds to the reply's content, as its dialect reads it
/// (`""`: none, or a line that is no payload).
pub(crate) fn line_text(kind: Kind, line: &str) -> String {
    match payload(kind, line) {
        Some(Ok(chunk)) => kind.dialect.text_delta(&chunk).to_owned(),
        _ => String::new(),
    }
}

/// Assemble a streamed reply into the provider's non-streamed reply body.
pub fn assemble(kind: Kind, text: &str) -> Result<Value, ProviderError> {
    let chunks = payloads(kind, text)?;
    kind.dialect.assemble(kind, &chunks)
}
