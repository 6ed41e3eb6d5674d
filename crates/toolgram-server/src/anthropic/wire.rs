//! Anthropic's Messages replies from a run: the runtime's [`Response`], [`Event`]s and errors
//! handed to toolgram-wire's `anthropic` writers (the `message` object, the SSE sequence, the
//! error body), which the provider reads Anthropic's replies with too. Pure mapping: this
//! module must not read requests, touch HTTP or spell Anthropic's JSON itself.

use crate::error::ApiError;
use serde_json::Value;
use toolgram_runtime::{CallKind, Event, FinishReason, PendingCall, Response, ToolStep, Usage};
use toolgram_wire::anthropic::mcp;
use toolgram_wire::anthropic::reply;
use toolgram_wire::anthropic::stream::{Frame, MessageStream};

/// The `message` object of a finished reply; `toolgram` is the extension object. A tool
/// loop's calls come first, each an `mcp_tool_use` and its `mcp_tool_result`; calls it did
/// not run, last, as `mcp_tool_use` blocks alone.
pub fn message(id: &str, model: &str, r: &Response, toolgram: Value) -> Value {
    let mut body = reply::message(id, model, &r.reply(), toolgram);
    if !(r.steps.is_empty() && r.pending.is_empty()) {
        let mut content: Vec<Value> = r.steps.iter().flat_map(step_blocks).collect();
        if let Some(Value::Array(rest)) = body.get_mut("content") {
            content.append(rest);
        }
        content.extend(r.pending.iter().map(pending_block));
        body["content"] = Value::Array(content);
    }
    body
}

/// A call a loop ran: its `mcp_tool_use` block and its `mcp_tool_result` block.
fn step_blocks(s: &ToolStep) -> [Value; 2] {
    [
        mcp::tool_use_block(&s.id, &s.server, &s.tool, &s.arguments),
        mcp::tool_result_block(&s.id, &s.result, s.is_error),
    ]
}

/// A call a loop did not run, as its `mcp_tool_use` block.
fn pending_block(p: &PendingCall) -> Value {
    let input = match &p.call.kind {
        CallKind::Function { arguments } => arguments.clone(),
        CallKind::Custom { input } => serde_json::json!({ "input": input }),
    };
    mcp::tool_use_block(&p.call.id, &p.server, &p.call.name, &input)
}

/// The `message` object of a reply cut by `max_tokens` before any call was complete.
pub fn cut_message(id: &str, model: &str, used: Option<Usage>, toolgram: Value) -> Value {
    reply::cut_message(id, model, used, toolgram)
}

/// The error body, with Anthropic's error type for the status.
pub fn error(e: &ApiError) -> Value {
    let f = e.fields();
    reply::error(
        f.status.as_u16(),
        &f.message,
        f.param.as_deref(),
        &f.details,
    )
}

/// A run's events as Anthropic's frames, and the notes its `toolgram` object carries at the end.
pub struct Frames {
    stream: MessageStream,
    notes: Vec<String>,
}

impl Frames {
    /// The writer and the stream's first frames.
    pub fn start(id: &str, model: &str, notes: Vec<String>) -> (Self, Vec<Frame>) {
        let (stream, frames) = MessageStream::start(id, model);
        (Self { stream, notes }, frames)
    }

    /// The frames `event` becomes; after the last (`Done` or `Failed`) the stream is over.
    /// Anthropic's stream has no frame for a retry: `Retry` writes nothing.
    pub fn on(&mut self, event: Event) -> Vec<Frame> {
        let s = &mut self.stream;
        match event {
            Event::ContentDelta(t) => s.text(&t),
            Event::ReasoningDelta(t) => s.thinking(&t),
            Event::ToolCallStart { id, name, .. } => s.call_start(&id, &name),
            Event::ToolCallDelta { arguments, .. } => s.call_input(&arguments),
            Event::ToolCallEnd { .. } => s.call_end(),
            Event::Retry { .. } => Vec::new(),
            Event::ToolStep(step) => step_blocks(&step)
                .into_iter()
                .flat_map(|b| s.whole_block(b))
                .collect(),
            Event::Done(r) => {
                let mut frames: Vec<Frame> = r
                    .pending
                    .iter()
                    .flat_map(|c| s.whole_block(pending_block(c)))
                    .collect();
                let toolgram = crate::app::toolgram_json(Some(&r), &self.notes);
                frames.extend(s.end(r.finish_reason, r.usage, toolgram));
                frames
            }
            Event::Failed(e) if e.kind() == "truncated" => {
                let toolgram = crate::app::cut_toolgram_json(&e, &self.notes);
                s.end(FinishReason::Length, e.usage(), toolgram)
            }
            Event::Failed(e) => s.failed(error(&ApiError::from(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn errors_take_anthropics_type_for_their_status() {
        let e = ApiError::invalid("messages", "bad");
        let body = error(&e);
        assert_eq!(body["type"], "error");
        assert_eq!(body["error"]["type"], "invalid_request_error");
        assert_eq!(body["error"]["param"], "messages");
        let busy = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "busy",
            "x",
        );
        assert_eq!(error(&busy)["error"]["type"], "rate_limit_error");
    }
}
