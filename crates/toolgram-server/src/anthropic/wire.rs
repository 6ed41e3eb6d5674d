//! Anthropic's Messages wire shape: a run's [`Response`] as a `message` object, its
//! [`Event`]s as Anthropic's SSE sequence (`message_start`, `ping`, `content_block_start` /
//! `_delta` / `_stop` per block, `message_delta` with the stop reason and usage,
//! `message_stop`), and errors as `{"type":"error","error":{"type","message"}}`. Pure
//! mapping: this module must not read requests or touch HTTP.

use crate::error::ApiError;
use axum::http::StatusCode;
use serde_json::{Value, json};
use toolgram_runtime::{CallKind, Event, FinishReason, Response, Usage};

/// The `signature` of a thinking block: Anthropic's clients send thinking blocks back with
/// one; this server ignores it when they do.
const SIGNATURE: &str = "toolgram-unsigned";

/// One SSE frame: the event name and its data (which carries the same `type`).
pub type Frame = (&'static str, Value);

/// Anthropic's `stop_reason` for a reply.
pub fn stop_reason(r: &Response) -> &'static str {
    match r.finish_reason {
        FinishReason::ToolCalls => "tool_use",
        FinishReason::Length => "max_tokens",
        FinishReason::Stop => "end_turn",
    }
}

/// Anthropic's usage: `input_tokens` are the prompt tokens not read from the cache.
pub fn usage(u: Option<Usage>) -> Value {
    let u = u.unwrap_or_default();
    json!({
        "input_tokens": u.prompt_tokens.saturating_sub(u.cached_prompt_tokens),
        "output_tokens": u.completion_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": u.cached_prompt_tokens,
    })
}

fn arguments(kind: &CallKind) -> Value {
    match kind {
        CallKind::Function { arguments } => arguments.clone(),
        CallKind::Custom { input } => json!({ "input": input }),
    }
}

/// The content blocks of a reply: thinking, text, then one `tool_use` per call.
pub fn content(r: &Response) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(t) = r.reasoning.as_deref().filter(|t| !t.is_empty()) {
        blocks.push(json!({"type": "thinking", "thinking": t, "signature": SIGNATURE}));
    }
    if let Some(t) = r.content.as_deref().filter(|t| !t.is_empty()) {
        blocks.push(json!({"type": "text", "text": t}));
    }
    for c in &r.tool_calls {
        blocks.push(
            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments(&c.kind)}),
        );
    }
    blocks
}

/// The `message` object of a finished reply; `toolgram` is the extension object.
pub fn message(id: &str, model: &str, r: &Response, toolgram: Value) -> Value {
    json!({
        "id": id, "type": "message", "role": "assistant", "model": model,
        "content": content(r), "stop_reason": stop_reason(r), "stop_sequence": null,
        "usage": usage(r.usage), "toolgram": toolgram,
    })
}

/// The `message` object of a reply cut by `max_tokens` before any call was complete: no
/// half call, the tokens it used.
pub fn cut_message(id: &str, model: &str, used: Option<Usage>, toolgram: Value) -> Value {
    json!({
        "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": "max_tokens", "stop_sequence": null, "usage": usage(used),
        "toolgram": toolgram,
    })
}

/// Anthropic's error type for an HTTP status.
fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 405 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        503 | 529 => "overloaded_error",
        504 | 408 => "timeout_error",
        _ => "api_error",
    }
}

/// The error body: `{"type":"error","error":{"type","message"}}` (with toolgram's details).
pub fn error(e: &ApiError) -> Value {
    let f = e.fields();
    let mut err = json!({"type": error_type(f.status), "message": f.message});
    if let Some(p) = &f.param {
        err["param"] = json!(p);
    }
    if !f.details.is_null() {
        err["toolgram"] = f.details.clone();
    }
    json!({"type": "error", "error": err, "request_id": null})
}

/// The kind of the block open in a stream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
    ToolUse,
}

/// Turns a run's events into Anthropic's SSE frames, one block open at a time, indices in
/// the order blocks start.
pub struct MessageStream {
    next_index: usize,
    open: Option<Block>,
}

impl MessageStream {
    /// The stream and its first frames: `message_start` (an empty message) and a `ping`.
    pub fn start(id: &str, model: &str) -> (Self, Vec<Frame>) {
        let message = json!({"id": id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage(None)});
        let frames = vec![
            frame(
                "message_start",
                json!({"type": "message_start", "message": message}),
            ),
            frame("ping", json!({"type": "ping"})),
        ];
        (
            Self {
                next_index: 0,
                open: None,
            },
            frames,
        )
    }

    fn close(&mut self, out: &mut Vec<Frame>) {
        let Some(block) = self.open.take() else {
            return;
        };
        let index = self.next_index - 1;
        if block == Block::Thinking {
            out.push(delta(
                index,
                json!({"type": "signature_delta", "signature": SIGNATURE}),
            ));
        }
        out.push(frame(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }

    fn open(&mut self, block: Block, content_block: Value, out: &mut Vec<Frame>) -> usize {
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some(block);
        out.push(frame(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        ));
        index
    }

    /// The block of `kind` open, opening one with `content_block` if another (or none) is.
    fn ensure(&mut self, block: Block, content_block: Value, out: &mut Vec<Frame>) -> usize {
        if self.open == Some(block) {
            self.next_index - 1
        } else {
            self.open(block, content_block, out)
        }
    }

    /// The frames `event` becomes; after the last (`Done` or `Failed`) the stream is over.
    pub fn on(&mut self, event: Event) -> Vec<Frame> {
        let mut out = Vec::new();
        match event {
            Event::ContentDelta(t) => {
                let start = json!({"type": "text", "text": ""});
                let i = self.ensure(Block::Text, start, &mut out);
                out.push(delta(i, json!({"type": "text_delta", "text": t})));
            }
            Event::ReasoningDelta(t) => {
                let start = json!({"type": "thinking", "thinking": "", "signature": ""});
                let i = self.ensure(Block::Thinking, start, &mut out);
                out.push(delta(i, json!({"type": "thinking_delta", "thinking": t})));
            }
            Event::ToolCallStart { id, name, .. } => {
                let start = json!({"type": "tool_use", "id": id, "name": name, "input": {}});
                self.open(Block::ToolUse, start, &mut out);
            }
            // Anthropic's tools are all JSON-Schema functions: the deltas are JSON text.
            Event::ToolCallDelta { arguments, .. } => {
                if self.open == Some(Block::ToolUse) {
                    out.push(delta(
                        self.next_index - 1,
                        json!({"type": "input_json_delta", "partial_json": arguments}),
                    ));
                }
            }
            Event::ToolCallEnd { .. } => self.close(&mut out),
            Event::Retry { .. } => {}
            Event::Done(r) => {
                self.close(&mut out);
                out.extend(end(stop_reason(&r), usage(r.usage)));
            }
            Event::Failed(e) if e.kind() == "truncated" => {
                self.close(&mut out);
                out.extend(end("max_tokens", usage(e.usage())));
            }
            Event::Failed(e) => {
                self.close(&mut out);
                out.push(frame("error", error(&ApiError::from(e))));
            }
        }
        out
    }
}

fn frame(name: &'static str, data: Value) -> Frame {
    (name, data)
}

fn delta(index: usize, delta: Value) -> Frame {
    frame(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn end(stop_reason: &str, usage: Value) -> [Frame; 2] {
    [
        frame(
            "message_delta",
            json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": usage}),
        ),
        frame("message_stop", json!({"type": "message_stop"})),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgram_core::define::request::Path;
    use toolgram_runtime::Call;

    fn reply(reasoning: Option<&str>, content: Option<&str>, calls: Vec<Call>) -> Response {
        let finish_reason = if calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        Response {
            content: content.map(str::to_owned),
            raw: String::new(),
            reasoning: reasoning.map(str::to_owned),
            tool_calls: calls,
            finish_reason,
            usage: Some(Usage {
                prompt_tokens: 100,
                completion_tokens: 7,
                cached_prompt_tokens: 60,
            }),
            ..Response::ran(Path::Grammar, "", "embedded", "hermes", "m.gguf")
        }
    }

    fn weather_call() -> Call {
        Call {
            id: "call_1".into(),
            name: "get_weather".into(),
            kind: CallKind::Function {
                arguments: json!({"city": "Paris"}),
            },
        }
    }

    /// Blocks in the order Anthropic writes them; usage splits cached from evaluated tokens.
    #[test]
    fn a_message_has_thinking_then_text_then_tool_use_and_anthropics_usage() {
        let r = reply(Some("hmm"), Some("Let me look."), vec![weather_call()]);
        let m = message("msg_1", "served", &r, json!({}));
        let kinds: Vec<&str> = m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["type"].as_str())
            .collect();
        assert_eq!(kinds, ["thinking", "text", "tool_use"]);
        assert_eq!(m["content"][2]["input"], json!({"city": "Paris"}));
        assert_eq!(m["stop_reason"], "tool_use");
        assert_eq!(m["usage"]["input_tokens"], 40);
        assert_eq!(m["usage"]["cache_read_input_tokens"], 60);
        assert_eq!(m["usage"]["output_tokens"], 7);
        let text_only = message(
            "msg_2",
            "served",
            &reply(None, Some("Hi"), vec![]),
            json!({}),
        );
        assert_eq!(text_only["stop_reason"], "end_turn");
        assert_eq!(text_only["content"].as_array().map(Vec::len), Some(1));
    }

    /// One block open at a time, indices in start order, a signature before a thinking block
    /// closes, and the stream ends with the stop reason and `message_stop`.
    #[test]
    fn events_become_anthropics_frames_in_order() {
        let (mut s, mut frames) = MessageStream::start("msg_1", "served");
        let events = vec![
            Event::ReasoningDelta("a".into()),
            Event::ReasoningDelta("b".into()),
            Event::ContentDelta("Hi".into()),
            Event::ToolCallStart {
                index: 0,
                id: "call_1".into(),
                name: "get_weather".into(),
                custom: false,
            },
            Event::ToolCallDelta {
                index: 0,
                arguments: "{\"city\":".into(),
                custom: false,
            },
            Event::ToolCallDelta {
                index: 0,
                arguments: "\"Paris\"}".into(),
                custom: false,
            },
            Event::ToolCallEnd { index: 0 },
            Event::Done(Box::new(reply(
                Some("ab"),
                Some("Hi"),
                vec![weather_call()],
            ))),
        ];
        for e in events {
            frames.extend(s.on(e));
        }
        let names: Vec<&str> = frames.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "ping",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        // Every frame's data carries its own type.
        assert!(frames.iter().all(|(n, d)| d["type"] == *n));
        let starts: Vec<(u64, &str)> = frames
            .iter()
            .filter(|(n, _)| *n == "content_block_start")
            .filter_map(|(_, d)| Some((d["index"].as_u64()?, d["content_block"]["type"].as_str()?)))
            .collect();
        assert_eq!(starts, [(0, "thinking"), (1, "text"), (2, "tool_use")]);
        assert_eq!(frames[5].1["delta"]["type"], "signature_delta");
        let json: String = frames
            .iter()
            .filter_map(|(_, d)| d["delta"]["partial_json"].as_str())
            .collect();
        assert_eq!(json, "{\"city\":\"Paris\"}");
        assert_eq!(frames[14].1["delta"]["stop_reason"], "tool_use");
        assert_eq!(frames[14].1["usage"]["input_tokens"], 40);
    }

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
