//! The Responses API's event sequence, written and read. Written ([`ResponseStream`]):
//! `response.created` and `.in_progress`, per output item `output_item.added`, its deltas
//! (`output_text`, `reasoning_text`, `function_call_arguments`, `custom_tool_call_input`),
//! their `.done` and `output_item.done`, then `response.completed` or `.incomplete` — each
//! frame numbered in the order it is made. Read ([`assemble`]): the reply is the
//! `response.completed` event's object. This module must not touch HTTP or decide when a
//! stream ends.

use crate::error::WireError;
use crate::responses::reply::{Asked, message_item, reasoning_item};
use serde_json::{Value, json};

/// One SSE frame: the event name and its data (which carries the same `type`).
pub type Frame = (String, Value);

/// The open output item of a stream.
struct Open {
    index: usize,
    id: String,
    kind: &'static str,
    text: String,
    item: Value,
}

/// The Responses event sequence of one stream: frames numbered in the order they are made.
pub struct ResponseStream {
    asked: Asked,
    seq: u64,
    open: Option<Open>,
    done_items: Vec<Value>,
    out: Vec<Frame>,
}

impl ResponseStream {
    /// The stream of a response whose `in_progress` object is `created`, for a request that
    /// `asked` what it did: its first frames.
    pub fn start(created: &Value, asked: Asked) -> (Self, Vec<Frame>) {
        let mut s = Self {
            asked,
            seq: 0,
            open: None,
            done_items: Vec::new(),
            out: Vec::new(),
        };
        s.send("response.created", json!({"response": created}));
        s.send("response.in_progress", json!({"response": created}));
        let frames = std::mem::take(&mut s.out);
        (s, frames)
    }

    fn send(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.seq);
        self.seq += 1;
        self.out.push((kind.to_owned(), data));
    }

    fn close_open(&mut self) {
        let Some(o) = self.open.take() else { return };
        let (index, id) = (o.index, o.id.clone());
        let item = match o.kind {
            "message" => {
                self.send(
                    "response.output_text.done",
                    json!({"item_id": id, "output_index": index,
                    "content_index": 0, "text": o.text}),
                );
                self.send("response.content_part.done", json!({"item_id": id, "output_index": index,
                    "content_index": 0, "part": {"type": "output_text", "text": o.text, "annotations": []}}));
                message_item(&id, &o.text)
            }
            "reasoning" => {
                self.send(
                    "response.reasoning_text.done",
                    json!({"item_id": id,
                    "output_index": index, "content_index": 0, "text": o.text}),
                );
                reasoning_item(self.asked.encrypted_reasoning, &id, &o.text)
            }
            kind => {
                // A call's text is its arguments (a function's) or its input (a grammar tool's).
                let (event, field) = if kind == "function_call" {
                    ("response.function_call_arguments.done", "arguments")
                } else {
                    ("response.custom_tool_call_input.done", "input")
                };
                self.send(
                    event,
                    json!({"item_id": id, "output_index": index, field: o.text}),
                );
                let mut item = o.item;
                item[field] = json!(o.text);
                item["status"] = json!("completed");
                item
            }
        };
        self.send(
            "response.output_item.done",
            json!({"output_index": index, "item": item.clone()}),
        );
        self.done_items.push(item);
    }

    fn open(&mut self, kind: &'static str, id: String, item: Value) {
        self.close_open();
        let index = self.done_items.len();
        self.send(
            "response.output_item.added",
            json!({"output_index": index, "item": item.clone()}),
        );
        if kind == "message" {
            self.send("response.content_part.added", json!({"item_id": id, "output_index": index,
                "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
        }
        self.open = Some(Open {
            index,
            id,
            kind,
            text: String::new(),
            item,
        });
    }

    /// An item sent whole: `added` as it opens, each of `events` (their data with the item's
    /// id and index), then `item` as it is done.
    pub(crate) fn item_with_events(
        &mut self,
        added: Value,
        events: Vec<(&str, Value)>,
        item: Value,
    ) -> Vec<Frame> {
        self.close_open();
        let index = self.done_items.len();
        let id = item["id"].clone();
        self.send(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
        );
        for (kind, mut data) in events {
            data["item_id"] = id.clone();
            data["output_index"] = json!(index);
            self.send(kind, data);
        }
        self.send(
            "response.output_item.done",
            json!({"output_index": index, "item": item.clone()}),
        );
        self.done_items.push(item);
        std::mem::take(&mut self.out)
    }

    fn delta(&mut self, kind: &'static str, event: &str, text: &str) -> Vec<Frame> {
        if let Some(o) = self.open.as_mut().filter(|o| o.kind == kind) {
            o.text.push_str(text);
            let mut data = json!({"item_id": o.id, "output_index": o.index, "delta": text});
            if matches!(kind, "message" | "reasoning") {
                data["content_index"] = json!(0);
            }
            self.send(event, data);
        }
        std::mem::take(&mut self.out)
    }

    fn is_open(&self, kind: &str) -> bool {
        self.open.as_ref().is_some_and(|o| o.kind == kind)
    }

    /// More of the reasoning (a `reasoning` item opens with an id from `new_id`).
    pub fn reasoning(&mut self, t: &str, new_id: &mut dyn FnMut(&str) -> String) -> Vec<Frame> {
        if !self.is_open("reasoning") {
            let rid = new_id("rs");
            let item = json!({"type": "reasoning", "id": rid, "summary": [], "content": []});
            self.open("reasoning", rid, item);
        }
        self.delta("reasoning", "response.reasoning_text.delta", t)
    }

    /// More of the text (a `message` item opens with an id from `new_id`).
    pub fn text(&mut self, t: &str, new_id: &mut dyn FnMut(&str) -> String) -> Vec<Frame> {
        if !self.is_open("message") {
            let mid = new_id("msg");
            let item = json!({"type": "message", "id": mid,
                "status": "in_progress", "role": "assistant", "content": []});
            self.open("message", mid, item);
        }
        self.delta("message", "response.output_text.delta", t)
    }

    /// A call begins: its item opens (`custom`: a grammar tool's), with an id from `new_id`.
    pub fn call_start(
        &mut self,
        call_id: &str,
        name: &str,
        custom: bool,
        new_id: &mut dyn FnMut(&str) -> String,
    ) -> Vec<Frame> {
        let fid = new_id("fc");
        let (kind, mut item) = if custom {
            (
                "custom_tool_call",
                json!({"type": "custom_tool_call", "id": fid,
                "call_id": call_id, "name": name, "input": "", "status": "in_progress"}),
            )
        } else {
            (
                "function_call",
                json!({"type": "function_call", "id": fid,
                "call_id": call_id, "name": name, "arguments": "", "status": "in_progress"}),
            )
        };
        if let Some(ns) = self.asked.namespaces.get(name) {
            item["namespace"] = json!(ns);
        }
        self.open(kind, fid, item);
        std::mem::take(&mut self.out)
    }

    /// More of the open call's arguments (a custom tool's input).
    pub fn call_delta(&mut self, text: &str, custom: bool) -> Vec<Frame> {
        if custom {
            self.delta(
                "custom_tool_call",
                "response.custom_tool_call_input.delta",
                text,
            )
        } else {
            self.delta(
                "function_call",
                "response.function_call_arguments.delta",
                text,
            )
        }
    }

    /// The open call is complete: its item closes.
    pub fn call_end(&mut self) -> Vec<Frame> {
        self.close_open();
        std::mem::take(&mut self.out)
    }

    /// Close the open item and hand over the items finished so far (for the last object).
    pub fn close(&mut self) -> (Vec<Value>, Vec<Frame>) {
        self.close_open();
        (
            std::mem::take(&mut self.done_items),
            std::mem::take(&mut self.out),
        )
    }

    /// The last frame: `response.completed` or `response.incomplete` with the final object.
    pub fn finish(&mut self, body: Value) -> Frame {
        let kind = if body["status"] == "incomplete" {
            "response.incomplete"
        } else {
            "response.completed"
        };
        self.send(kind, json!({"response": body}));
        self.out.pop().unwrap_or_default()
    }

    /// An error frame (`error`, with the error object's fields).
    pub fn error(&mut self, error: Value) -> Frame {
        self.send("error", error);
        self.out.pop().unwrap_or_default()
    }
}

/// A stream's events (their data, in order) read back into the reply: the
/// `response.completed` event's object.
pub fn assemble(events: &[Value]) -> Result<Value, WireError> {
    events
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("response.completed"))
        .and_then(|c| c.get("response").cloned())
        .ok_or_else(|| {
            WireError::invalid(
                "response.completed",
                "the stream has no response.completed event",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::responses::reply::{Envelope, read_calls, read_text, response_object};

    /// A streamed reply's frames are numbered in order, and the object the stream ends with
    /// reads back as the reply: text and the call.
    #[test]
    fn a_stream_ends_with_the_reply_it_streamed() {
        let env = Envelope {
            id: "resp_1".into(),
            created_at: 0,
            model: "m".into(),
        };
        let asked = Asked::default();
        let created = response_object(&env, &asked, "in_progress", Vec::new(), None, json!({}));
        let (mut s, mut frames) = ResponseStream::start(&created, asked.clone());
        let mut n = 0;
        let mut new_id = |p: &str| {
            n += 1;
            format!("{p}_{n}")
        };
        frames.extend(s.text("Read", &mut new_id));
        frames.extend(s.text("ing.", &mut new_id));
        frames.extend(s.call_start("call_1", "read_file", false, &mut new_id));
        frames.extend(s.call_delta("{\"path\":\"a.py\"}", false));
        frames.extend(s.call_end());
        let (items, closing) = s.close();
        frames.extend(closing);
        let body = response_object(&env, &asked, "completed", items, None, json!({}));
        frames.push(s.finish(body));
        let seq: Vec<u64> = frames
            .iter()
            .filter_map(|(_, d)| d["sequence_number"].as_u64())
            .collect();
        assert_eq!(seq, (0..frames.len() as u64).collect::<Vec<_>>());
        let events: Vec<Value> = frames.into_iter().map(|(_, d)| d).collect();
        let reply = assemble(&events).expect("completed");
        assert_eq!(read_text(&reply).as_deref(), Some("Reading."));
        assert_eq!(
            read_calls(&reply).expect("reads")[0].arguments,
            json!({"path": "a.py"})
        );
    }
}
