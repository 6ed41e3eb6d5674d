//! Anthropic's SSE sequence, written and read: `message_start` and `ping`, then per content
//! block `content_block_start`, `content_block_delta`s (`thinking_delta` and a closing
//! `signature_delta`, `text_delta`, `input_json_delta`) and `content_block_stop`, one block
//! open at a time, indices in the order blocks start; `message_delta` with the stop reason,
//! usage and the `toolgram` extension object (which clients ignore), `message_stop`.
//! [`MessageStream`] writes it from a run's pieces as they come; [`assemble`] reads a stream's
//! frames back into a reply's `content`. This module must not touch HTTP or decide when a
//! stream ends.

use crate::WireError;
use crate::anthropic::reply::{SIGNATURE, stop_reason, usage};
use crate::append::append;
use serde_json::{Value, json};
use toolgram_core::define::reply::{FinishReason, Usage};

/// One SSE frame: the event name and its data (which carries the same `type`).
pub type Frame = (&'static str, Value);

/// The kind of the block open in a stream.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
    ToolUse,
}

/// Writes a reply's pieces as Anthropic's frames, one block open at a time.
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
            (
                "message_start",
                json!({"type": "message_start", "message": message}),
            ),
            ("ping", json!({"type": "ping"})),
        ];
        let stream = Self {
            next_index: 0,
            open: None,
        };
        (stream, frames)
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
        out.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }

    fn open(&mut self, block: Block, content_block: Value, out: &mut Vec<Frame>) -> usize {
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some(block);
        out.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        ));
        index
    }

    /// The block of `kind` open, opening one with `content_block` if another (or none) is.
    fn ensure(&mut self, block: Block, content_block: Value) -> (usize, Vec<Frame>) {
        let mut out = Vec::new();
        let index = if self.open == Some(block) {
            self.next_index - 1
        } else {
            self.open(block, content_block, &mut out)
        };
        (index, out)
    }

    /// More of the reply's text.
    pub fn text(&mut self, t: &str) -> Vec<Frame> {
        let (i, mut out) = self.ensure(Block::Text, json!({"type": "text", "text": ""}));
        out.push(delta(i, json!({"type": "text_delta", "text": t})));
        out
    }

    /// More of its reasoning.
    pub fn thinking(&mut self, t: &str) -> Vec<Frame> {
        let start = json!({"type": "thinking", "thinking": "", "signature": ""});
        let (i, mut out) = self.ensure(Block::Thinking, start);
        out.push(delta(i, json!({"type": "thinking_delta", "thinking": t})));
        out
    }

    /// A call begins: its `tool_use` block opens.
    pub fn call_start(&mut self, id: &str, name: &str) -> Vec<Frame> {
        let mut out = Vec::new();
        let start = json!({"type": "tool_use", "id": id, "name": name, "input": {}});
        self.open(Block::ToolUse, start, &mut out);
        out
    }

    /// More of the open call's input, as JSON text (Anthropic's tools are all JSON-Schema
    /// functions).
    pub fn call_input(&mut self, json_text: &str) -> Vec<Frame> {
        if self.open != Some(Block::ToolUse) {
            return Vec::new();
        }
        let d = json!({"type": "input_json_delta", "partial_json": json_text});
        vec![delta(self.next_index - 1, d)]
    }

    /// A block sent whole (a call a server ran, its result): it starts with all its
    /// fields and stops.
    pub fn whole_block(&mut self, block: Value) -> Vec<Frame> {
        let mut out = Vec::new();
        let index = self.open(Block::ToolUse, block, &mut out);
        self.open = None;
        out.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        out
    }

    /// The open call is complete: its block closes.
    pub fn call_end(&mut self) -> Vec<Frame> {
        let mut out = Vec::new();
        self.close(&mut out);
        out
    }

    /// The reply ended for `finish` (or was cut by `max_tokens`: [`FinishReason::Length`])
    /// after using `used`: the open block closes, `message_delta` (carrying `toolgram`, as
    /// the non-streamed `message` does) and `message_stop` follow.
    pub fn end(
        &mut self,
        finish: FinishReason,
        used: Option<Usage>,
        toolgram: Value,
    ) -> Vec<Frame> {
        let mut out = Vec::new();
        self.close(&mut out);
        out.push((
            "message_delta",
            json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason(finish), "stop_sequence": null},
                "usage": usage(used), "toolgram": toolgram}),
        ));
        out.push(("message_stop", json!({"type": "message_stop"})));
        out
    }

    /// The run failed: the open block closes and an `error` frame carries `body` (the API's
    /// error body, [`crate::anthropic::reply::error`]).
    pub fn failed(&mut self, body: Value) -> Vec<Frame> {
        let mut out = Vec::new();
        self.close(&mut out);
        out.push(("error", body));
        out
    }
}

fn delta(index: usize, delta: Value) -> Frame {
    (
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

/// A stream's frames (their data, in order) read back into a reply body's `content`: each
/// block as it started, its text, thinking and input JSON added up. A tool's input that does
/// not add up to JSON is an error naming the block.
pub fn assemble(frames: &[Value]) -> Result<Value, WireError> {
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial: Vec<String> = Vec::new();
    for c in frames {
        let index = c.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match c.get("type").and_then(Value::as_str) {
            Some("content_block_start") => {
                while blocks.len() <= index {
                    blocks.push(Value::Null);
                    partial.push(String::new());
                }
                blocks[index] = c.get("content_block").cloned().unwrap_or(Value::Null);
            }
            Some("content_block_delta") => {
                let d = c.get("delta").cloned().unwrap_or(Value::Null);
                let piece = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("");
                match (d.get("type").and_then(Value::as_str), blocks.get_mut(index)) {
                    (Some("text_delta"), Some(b)) => append(&mut b["text"], piece("text")),
                    (Some("thinking_delta"), Some(b)) => {
                        append(&mut b["thinking"], piece("thinking"))
                    }
                    (Some("input_json_delta"), Some(_)) => {
                        partial[index].push_str(piece("partial_json"))
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    for (i, (b, json_text)) in blocks.iter_mut().zip(&partial).enumerate() {
        if b.get("type").and_then(Value::as_str) == Some("tool_use") && !json_text.is_empty() {
            b["input"] = serde_json::from_str(json_text).map_err(|e| {
                WireError::invalid(
                    format!("content[{i}].input"),
                    format!("tool input is not JSON: {e}"),
                )
            })?;
        }
    }
    Ok(json!({"content": blocks}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::reply::{content, read_calls};

    /// The frames of one streamed reply: reasoning, text, one call in two pieces.
    fn frames() -> Vec<Frame> {
        let (mut s, mut frames) = MessageStream::start("msg_1", "served");
        frames.extend(s.thinking("a"));
        frames.extend(s.thinking("b"));
        frames.extend(s.text("Hi"));
        frames.extend(s.call_start("call_1", "get_weather"));
        frames.extend(s.call_input("{\"city\":"));
        frames.extend(s.call_input("\"Paris\"}"));
        frames.extend(s.call_end());
        frames.extend(s.end(
            FinishReason::ToolCalls,
            Some(crate::fixtures::USAGE),
            json!({"notes": []}),
        ));
        frames
    }

    /// One block open at a time, indices in start order, a signature before a thinking block
    /// closes, and the stream ends with the stop reason and `message_stop`.
    #[test]
    fn pieces_become_anthropics_frames_in_order() {
        let frames = frames();
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
        assert_eq!(frames[14].1["delta"]["stop_reason"], "tool_use");
        assert_eq!(frames[14].1["usage"]["input_tokens"], 40);
    }

    /// A stream written and assembled gives the blocks of the same reply written whole
    /// (but the thinking block's signature, which only a finished block carries).
    #[test]
    fn a_stream_assembled_is_the_message_written_whole() {
        let data: Vec<Value> = frames().into_iter().map(|(_, d)| d).collect();
        let mut assembled = assemble(&data).expect("assembles");
        assembled["content"][0]["signature"] = json!(SIGNATURE);
        let calls = crate::fixtures::calls();
        let whole = crate::fixtures::reply(Some("ab"), Some("Hi"), &calls[..1]);
        assert_eq!(assembled["content"], json!(content(&whole)));
        assert_eq!(
            read_calls(&assembled)[0].arguments,
            json!({"city": "Paris"})
        );
    }

    #[test]
    fn input_that_is_not_json_names_its_block() {
        let (mut s, _) = MessageStream::start("m", "x");
        let mut frames = s.call_start("c", "t");
        frames.extend(s.call_input("{\"a\":"));
        frames.extend(s.call_end());
        let data: Vec<Value> = frames.into_iter().map(|(_, d)| d).collect();
        assert_eq!(
            assemble(&data).expect_err("refused").param,
            "content[0].input"
        );
    }
}
