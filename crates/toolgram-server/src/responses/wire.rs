//! OpenAI's Responses wire shape: a run's [`Response`] as output items (`reasoning` — with its
//! text in `encrypted_content` when asked, so a later request gives it back —, `message`,
//! `function_call` with its `namespace`, `custom_tool_call`) in a `response` object that echoes
//! the request's fields, `incomplete` when `max_output_tokens` cut it; a run's [`Event`]s as
//! the Responses event sequence (`response.created`, `.in_progress`, per item
//! `output_item.added` / the deltas / their `.done` / `output_item.done`, then
//! `response.completed` or `.incomplete`), each numbered. Pure mapping: this module must not
//! read requests or touch HTTP.

use super::encrypted::{ENCRYPTED_PREFIX, hex};
use super::read::Checked;
use serde_json::{Value, json};
use toolgram_runtime::{CallKind, Event, FinishReason, Response, Usage};

/// One SSE frame: the event name and its data (which carries the same `type`).
pub type Frame = (String, Value);

/// What every object of one response repeats: its id, creation time and model.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// `resp_…`.
    pub id: String,
    /// Unix seconds.
    pub created_at: u64,
    /// The model id the server answers as.
    pub model: String,
}

fn call_item(rr: &Checked, id: &str, call_id: &str, name: &str, kind: &CallKind) -> Value {
    let mut item = match kind {
        CallKind::Function { arguments } => json!({"type": "function_call", "id": id,
            "call_id": call_id, "name": name, "arguments": arguments.to_string(),
            "status": "completed"}),
        CallKind::Custom { input } => json!({"type": "custom_tool_call", "id": id,
            "call_id": call_id, "name": name, "input": input, "status": "completed"}),
    };
    if let Some(ns) = rr.namespaces.get(name) {
        item["namespace"] = json!(ns);
    }
    item
}

fn message_item(id: &str, text: &str) -> Value {
    json!({"type": "message", "id": id, "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn reasoning_item(encrypted: bool, id: &str, text: &str) -> Value {
    let mut item = json!({"type": "reasoning", "id": id, "summary": [],
        "content": [{"type": "reasoning_text", "text": text}]});
    if encrypted {
        item["encrypted_content"] = json!(format!("{ENCRYPTED_PREFIX}{}", hex(text)));
    }
    item
}

/// Output items of a reply, each with an id from `new_id(prefix)`.
pub fn output_items(
    rr: &Checked,
    r: &Response,
    new_id: &mut dyn FnMut(&str) -> String,
) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(t) = &r.reasoning {
        items.push(reasoning_item(rr.encrypted_reasoning, &new_id("rs"), t));
    }
    if let Some(t) = &r.content {
        items.push(message_item(&new_id("msg"), t));
    }
    for c in &r.tool_calls {
        items.push(call_item(rr, &new_id("fc"), &c.id, &c.name, &c.kind));
    }
    items
}

/// Responses' usage object.
pub fn usage(u: Option<Usage>) -> Value {
    u.map_or(Value::Null, |u| {
        json!({
        "input_tokens": u.prompt_tokens, "output_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
        "input_tokens_details": {"cached_tokens": u.cached_prompt_tokens},
        "output_tokens_details": {"reasoning_tokens": 0}})
    })
}

/// The `response` object: `status`, `output`, the reply's usage, the request's echoed
/// fields and `toolgram`.
pub fn response_object(
    env: &Envelope,
    rr: &Checked,
    status: &str,
    output: Vec<Value>,
    r: Option<&Response>,
    toolgram: Value,
) -> Value {
    let mut v = json!({"id": env.id, "object": "response", "created_at": env.created_at,
        "status": status, "model": env.model, "output": output,
        "usage": usage(r.and_then(|r| r.usage)), "error": null,
        "incomplete_details": null, "store": rr.store});
    if let (Value::Object(o), Value::Object(e)) = (&mut v, &rr.echo) {
        for (k, val) in e {
            o.entry(k.clone()).or_insert_with(|| val.clone());
        }
    }
    v["toolgram"] = toolgram;
    v
}

/// The response object of a finished reply: `incomplete` when `max_output_tokens` cut its text.
pub fn finished(
    env: &Envelope,
    rr: &Checked,
    output: Vec<Value>,
    r: &Response,
    toolgram: Value,
) -> Value {
    if r.finish_reason == FinishReason::Length {
        let mut body = response_object(env, rr, "incomplete", output, Some(r), toolgram);
        body["incomplete_details"] = json!({"reason": "max_output_tokens"});
        body
    } else {
        response_object(env, rr, "completed", output, Some(r), toolgram)
    }
}

/// The response object of a generation cut before any call was complete: `incomplete`, the
/// items finished before the cut, the tokens it used.
pub fn cut(
    env: &Envelope,
    rr: &Checked,
    output: Vec<Value>,
    used: Option<Usage>,
    toolgram: Value,
) -> Value {
    let mut body = response_object(env, rr, "incomplete", output, None, toolgram);
    body["incomplete_details"] = json!({"reason": "max_output_tokens"});
    body["usage"] = usage(used);
    body
}

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
    seq: u64,
    open: Option<Open>,
    done_items: Vec<Value>,
    out: Vec<Frame>,
}

impl ResponseStream {
    /// The stream of a response whose `in_progress` object is `created`: its first frames.
    pub fn start(created: &Value) -> (Self, Vec<Frame>) {
        let mut s = Self {
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

    fn close_open(&mut self, encrypted_reasoning: bool) {
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
                reasoning_item(encrypted_reasoning, &id, &o.text)
            }
            "function_call" => {
                self.send(
                    "response.function_call_arguments.done",
                    json!({"item_id": id,
                    "output_index": index, "arguments": o.text}),
                );
                let mut item = o.item;
                item["arguments"] = json!(o.text);
                item["status"] = json!("completed");
                item
            }
            _ => {
                self.send(
                    "response.custom_tool_call_input.done",
                    json!({"item_id": id,
                    "output_index": index, "input": o.text}),
                );
                let mut item = o.item;
                item["input"] = json!(o.text);
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

    fn open(&mut self, encrypted_reasoning: bool, kind: &'static str, id: String, item: Value) {
        self.close_open(encrypted_reasoning);
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

    fn delta(&mut self, kind: &'static str, event: &str, text: &str) {
        let Some(o) = self.open.as_mut().filter(|o| o.kind == kind) else {
            return;
        };
        o.text.push_str(text);
        let mut data = json!({"item_id": o.id, "output_index": o.index, "delta": text});
        if matches!(kind, "message" | "reasoning") {
            data["content_index"] = json!(0);
        }
        self.send(event, data);
    }

    fn is_open(&self, kind: &str) -> bool {
        self.open.as_ref().is_some_and(|o| o.kind == kind)
    }

    /// The frames a decoded event becomes (none for the end events: see [`Self::finish`]);
    /// new items get ids from `new_id(prefix)`.
    pub fn on(
        &mut self,
        rr: &Checked,
        event: &Event,
        new_id: &mut dyn FnMut(&str) -> String,
    ) -> Vec<Frame> {
        let encrypted = rr.encrypted_reasoning;
        match event {
            Event::ReasoningDelta(t) => {
                if !self.is_open("reasoning") {
                    let rid = new_id("rs");
                    let item =
                        json!({"type": "reasoning", "id": rid, "summary": [], "content": []});
                    self.open(encrypted, "reasoning", rid, item);
                }
                self.delta("reasoning", "response.reasoning_text.delta", t);
            }
            Event::ContentDelta(t) => {
                if !self.is_open("message") {
                    let mid = new_id("msg");
                    let item = json!({"type": "message", "id": mid,
                        "status": "in_progress", "role": "assistant", "content": []});
                    self.open(encrypted, "message", mid, item);
                }
                self.delta("message", "response.output_text.delta", t);
            }
            Event::ToolCallStart {
                id: call_id,
                name,
                custom: is_custom,
                ..
            } => {
                let fid = new_id("fc");
                let (kind, mut item) = if *is_custom {
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
                if let Some(ns) = rr.namespaces.get(name) {
                    item["namespace"] = json!(ns);
                }
                self.open(encrypted, kind, fid, item);
            }
            Event::ToolCallDelta {
                arguments, custom, ..
            } => {
                if *custom {
                    let event = "response.custom_tool_call_input.delta";
                    self.delta("custom_tool_call", event, arguments);
                } else {
                    let event = "response.function_call_arguments.delta";
                    self.delta("function_call", event, arguments);
                }
            }
            Event::ToolCallEnd { .. } => self.close_open(encrypted),
            Event::Retry { .. } | Event::Done(_) | Event::Failed(_) => {}
        }
        std::mem::take(&mut self.out)
    }

    /// Close the open item and hand over the items finished so far (for the last object).
    pub fn close(&mut self, rr: &Checked) -> (Vec<Value>, Vec<Frame>) {
        self.close_open(rr.encrypted_reasoning);
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
