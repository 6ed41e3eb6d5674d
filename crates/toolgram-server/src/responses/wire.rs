//! Responses replies from a run: a run's [`Event`]s handed to toolgram-wire's
//! `responses::stream` writer (the numbered event sequence; its reply objects are
//! `responses::reply`'s, which the provider reads the API's replies with too). Pure mapping:
//! this module must not read requests, touch HTTP or spell the API's JSON itself.

use toolgram_runtime::Event;
use toolgram_wire::responses::stream::{Frame, ResponseStream};

/// The frames a decoded event becomes (none for the end events, which the handler answers
/// with the final object); new items get ids from `new_id(prefix)`.
pub fn event_frames(
    s: &mut ResponseStream,
    event: &Event,
    new_id: &mut dyn FnMut(&str) -> String,
) -> Vec<Frame> {
    match event {
        Event::ReasoningDelta(t) => s.reasoning(t, new_id),
        Event::ContentDelta(t) => s.text(t, new_id),
        Event::ToolCallStart {
            id, name, custom, ..
        } => s.call_start(id, name, *custom, new_id),
        Event::ToolCallDelta {
            arguments, custom, ..
        } => s.call_delta(arguments, *custom),
        Event::ToolCallEnd { .. } => s.call_end(),
        Event::Retry { .. } | Event::Done(_) | Event::Failed(_) => Vec::new(),
    }
}
