//! Server-Sent Events bodies from channels: JSON payloads alone, closed with `[DONE]`
//! (Chat Completions), or each under an event name (Responses, Anthropic Messages). This
//! module must not decide what is sent.

use axum::response::sse::{Event as Sse, KeepAlive};
use axum::response::{IntoResponse, Response as HttpResponse};
use serde_json::Value;
use tokio::sync::mpsc::Receiver;

/// The SSE response for a channel of JSON payloads, closed with `[DONE]`.
pub fn data(rx: Receiver<Value>) -> HttpResponse {
    let body = futures_util::stream::unfold((rx, false), |(mut rx, done)| async move {
        if done {
            return None;
        }
        match rx.recv().await {
            Some(v) => Some((
                Ok::<_, std::convert::Infallible>(Sse::default().data(v.to_string())),
                (rx, false),
            )),
            None => Some((Ok(Sse::default().data("[DONE]")), (rx, true))),
        }
    });
    axum::response::Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The SSE response for a channel of named events, each `event: NAME` with its JSON data.
pub fn named<N: AsRef<str> + Send + 'static>(rx: Receiver<(N, Value)>) -> HttpResponse {
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|(name, data)| {
            let event = Sse::default().event(name.as_ref()).data(data.to_string());
            (Ok::<_, std::convert::Infallible>(event), rx)
        })
    });
    axum::response::Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response()
}
