//! Server-Sent Events bodies from streams of frames: JSON payloads alone, closed with `[DONE]`
//! (Chat Completions), or each under an event name (Responses, Anthropic Messages). This
//! module must not decide what is sent.

use axum::response::sse::{Event as Sse, KeepAlive};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures_util::{Stream, StreamExt};
use serde_json::Value;

/// The SSE response for a stream of JSON payloads, closed with `[DONE]`.
pub fn data(frames: impl Stream<Item = Value> + Send + 'static) -> HttpResponse {
    let body = frames
        .map(|v| Sse::default().data(v.to_string()))
        .chain(futures_util::stream::once(async {
            Sse::default().data("[DONE]")
        }))
        .map(Ok::<_, std::convert::Infallible>);
    axum::response::Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The SSE response for a stream of named events, each `event: NAME` with its JSON data.
pub fn named<N: AsRef<str> + Send + 'static>(
    frames: impl Stream<Item = (N, Value)> + Send + 'static,
) -> HttpResponse {
    let body = frames.map(|(name, data)| {
        Ok::<_, std::convert::Infallible>(
            Sse::default().event(name.as_ref()).data(data.to_string()),
        )
    });
    axum::response::Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response()
}
