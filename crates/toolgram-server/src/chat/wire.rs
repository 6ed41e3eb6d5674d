//! Chat Completions replies from a run: the runtime's [`Response`], [`Event`]s and a cut
//! reply's error handed to toolgram-wire's `chat` writers (the `chat.completion`, its chunks),
//! which the providers read Chat Completions replies with too. Pure mapping: this module must
//! not read requests, touch HTTP or spell the API's JSON itself.

use serde_json::Value;
use toolgram_runtime::{Event, Response, RunError};
pub use toolgram_wire::chat::reply::Envelope;
pub use toolgram_wire::chat::stream::{reply_end_chunks, role_chunk};
use toolgram_wire::chat::{reply, stream};

/// The `chat.completion` object; `toolgram` is the reply's `toolgram` object.
pub fn completion(env: &Envelope, r: &Response, toolgram: Value) -> Value {
    reply::completion(env, &r.reply(), toolgram)
}

/// The reply to a generation cut before any call was complete: `finish_reason: "length"`;
/// `toolgram` says why.
pub fn truncated(env: &Envelope, e: &RunError, toolgram: Value) -> Value {
    reply::truncated(env, e.usage(), toolgram)
}

/// The last chunks of a stream cut before any call was complete (see [`truncated`]).
pub fn truncated_chunks(
    env: &Envelope,
    e: &RunError,
    toolgram: Value,
    include_usage: bool,
) -> Vec<Value> {
    stream::truncated_chunks(env, e.usage(), toolgram, include_usage)
}

/// The chunks a decoded event becomes (none for the end events: see [`reply_end_chunks`]).
pub fn event_chunks(env: &Envelope, event: &Event) -> Vec<Value> {
    let chunk = match event {
        Event::ContentDelta(t) => stream::content_chunk(env, t),
        Event::ReasoningDelta(t) => stream::reasoning_chunk(env, t),
        Event::ToolCallStart {
            index,
            id,
            name,
            custom,
        } => stream::call_start_chunk(env, *index, id, name, *custom),
        Event::ToolCallDelta {
            index,
            arguments,
            custom,
        } => stream::call_delta_chunk(env, *index, arguments, *custom),
        _ => return Vec::new(),
    };
    vec![chunk]
}
