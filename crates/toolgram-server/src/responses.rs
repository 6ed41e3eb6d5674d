//! `POST /v1/responses`: OpenAI's Responses API as coding agents send it — `input` as a
//! string or items (`message` of any role incl. `developer`, `function_call`,
//! `function_call_output`, `custom_tool_call`, `custom_tool_call_output`, `reasoning`; items of
//! hosted tools skipped with a note), `instructions`, `previous_response_id` (responses kept in
//! memory, bounded; `store: false` honoured), `namespace` tool groups, hosted tools left out
//! and listed, `reasoning` mapped to the model's reasoning block where its template has one,
//! `include: ["reasoning.encrypted_content"]` — read into a runtime [`Request`]; the reply as
//! output items (`reasoning`, `message`, `function_call` with its `namespace`,
//! `custom_tool_call`), or streamed with the Responses event types. This module must not run
//! the pipeline itself.

use crate::app::{App, Stored};
use crate::error::ApiError;
use crate::params::{self, Notes};
use axum::response::{IntoResponse, Response as HttpResponse};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use toolgram_core::define::request::Think;
use toolgram_core::{ChatMessage, MessageToolCall};
use toolgram_runtime::{CallKind, Event, Request, Response};

/// A request read from the body.
pub struct ResponsesRequest {
    /// The runtime request.
    pub req: Request,
    /// Stream the reply as typed events.
    pub stream: bool,
    store: bool,
    echo: Value,
    notes: Notes,
    namespaces: HashMap<String, String>,
    encrypted_reasoning: bool,
}

/// This route, as the metrics name it.
const ROUTE: &str = "/v1/responses";

/// Fields read and honoured.
const HONOURED: &[&str] = &[
    "model",
    "input",
    "instructions",
    "previous_response_id",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "text",
    "max_output_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "max_attempts",
    "repeats",
    "strict_schemas",
    "stream",
    "store",
    "reasoning",
    "include",
    "prompt_cache_key",
];

/// Fields accepted that change nothing a single local model does (the session cache keys
/// on the prompt itself, so `prompt_cache_key` needs no more than the prompt).
const ACCEPTED: &[&str] = &[
    "metadata",
    "client_metadata",
    "user",
    "service_tier",
    "truncation",
    "safety_identifier",
    "stream_options",
    "background",
    "top_logprobs",
];

/// What `encrypted_content` starts with: the reasoning's text follows, hex-encoded, so a
/// later request carrying the item gives the model its earlier reasoning back.
const ENCRYPTED_PREFIX: &str = "toolgram.reasoning.v1:";

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<String> {
    let bytes = (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

/// The reasoning text a `reasoning` input item carries back: our `encrypted_content`, else
/// its `content` or `summary` texts.
fn reasoning_text(item: &Value) -> Option<String> {
    if let Some(t) = item
        .get("encrypted_content")
        .and_then(Value::as_str)
        .and_then(|e| e.strip_prefix(ENCRYPTED_PREFIX))
        .and_then(unhex)
    {
        return Some(t);
    }
    let texts = |key: &str| {
        item.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .filter(|t| !t.is_empty())
    };
    texts("content").or_else(|| texts("summary"))
}

fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    }
}

fn call_message(call_id: &str, name: &str, arguments: String) -> MessageToolCall {
    MessageToolCall {
        id: call_id.to_owned(),
        kind: "function".to_owned(),
        function: toolgram_core::define::message::MessageFunction {
            name: name.to_owned(),
            arguments,
        },
    }
}

/// `input` items → chat messages (consecutive calls become one assistant message; a
/// `reasoning` item's text goes with the assistant turn after it); the tools of
/// `additional_tools` items (where a coding agent sends its tools) go to `tools`.
fn messages_of(
    input: &Value,
    tools: &mut Vec<Value>,
    notes: &mut Notes,
) -> Result<Vec<ChatMessage>, ApiError> {
    let items = match input {
        Value::String(s) => return Ok(vec![ChatMessage::text("user", s.clone())]),
        Value::Array(items) => items,
        _ => {
            return Err(ApiError::invalid(
                "input",
                "`input` must be a string or an array",
            ));
        }
    };
    let mut out: Vec<ChatMessage> = Vec::new();
    let mut reasoning: Option<String> = None;
    for (i, item) in items.iter().enumerate() {
        let at = format!("input[{i}]");
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        let s = |k: &str| item.get(k).and_then(Value::as_str);
        match kind {
            "message" => {
                let role = match s("role") {
                    Some("developer" | "system") => "system",
                    Some(r @ ("user" | "assistant")) => r,
                    _ => {
                        return Err(ApiError::invalid(
                            &at,
                            "a message needs role user, assistant, system or developer",
                        ));
                    }
                };
                let content = item
                    .get("content")
                    .and_then(text_of)
                    .ok_or_else(|| ApiError::invalid(&at, "a message needs `content`"))?;
                let mut m = ChatMessage::text(role, content);
                if role == "assistant" {
                    m.reasoning_content = reasoning.take();
                }
                out.push(m);
            }
            "function_call" | "custom_tool_call" => {
                let (Some(call_id), Some(name)) = (s("call_id"), s("name")) else {
                    return Err(ApiError::invalid(&at, "a call needs `call_id` and `name`"));
                };
                let arguments = if kind == "function_call" {
                    s("arguments").unwrap_or("{}").to_owned()
                } else {
                    json!({"input": s("input").unwrap_or("")}).to_string()
                };
                let call = call_message(call_id, name, arguments);
                match out.last_mut() {
                    Some(m) if m.role == "assistant" && m.tool_calls.is_some() => {
                        m.tool_calls.get_or_insert_with(Vec::new).push(call);
                    }
                    _ => out.push(ChatMessage {
                        role: "assistant".into(),
                        content: None,
                        tool_calls: Some(vec![call]),
                        tool_call_id: None,
                        name: None,
                        reasoning_content: reasoning.take(),
                    }),
                }
            }
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = s("call_id")
                    .ok_or_else(|| ApiError::invalid(&at, "an output needs `call_id`"))?;
                let output = item.get("output").and_then(text_of).unwrap_or_default();
                let mut m = ChatMessage::text("tool", output);
                m.tool_call_id = Some(call_id.to_owned());
                out.push(m);
            }
            "reasoning" => reasoning = reasoning_text(item),
            "additional_tools" => match item.get("tools") {
                Some(Value::Array(more)) => tools.extend(more.iter().cloned()),
                _ => return Err(ApiError::invalid(&at, "`additional_tools` needs `tools`")),
            },
            other => notes.push(format!(
                "{at}: item type `{other}` (a hosted tool's) is not run here and was left out"
            )),
        }
    }
    Ok(out)
}

/// Read a Responses body.
pub fn read(app: &App, body: &Value) -> Result<ResponsesRequest, ApiError> {
    let o = params::object(body)?;
    app.check_model(params::opt_str(o, "model")?)?;
    let mut messages = match params::opt_str(o, "previous_response_id")? {
        Some(id) => {
            app.stored(id)
                .ok_or_else(|| {
                    ApiError::invalid("previous_response_id", format!("no stored response `{id}`"))
                })?
                .messages
        }
        None => Vec::new(),
    };
    let mut notes = params::ignored_fields(o, HONOURED, ACCEPTED);
    let input = o
        .get("input")
        .ok_or_else(|| ApiError::invalid("input", "`input` is required"))?;
    let mut tools = match o.get("tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(ApiError::invalid("tools", "`tools` must be an array")),
    };
    messages.extend(messages_of(input, &mut tools, &mut notes)?);
    if let Some(instructions) = params::opt_str(o, "instructions")? {
        messages.retain(|m| m.role != "system");
        messages.insert(0, ChatMessage::text("system", instructions));
    }
    let pool = params::pool(&tools, app.config.hosted_tools, "tools")?;
    let has_tools = !pool.tools.tools().is_empty();
    let mut req = Request::new(messages, pool.tools);
    req.not_offered = pool.not_offered;
    req.think = think(app, o.get("reasoning"), &mut notes)?;
    req.tool_choice = params::tool_choice(o, has_tools)?;
    req.parallel_tool_calls = params::opt_bool(o, "parallel_tool_calls")?.unwrap_or(true);
    req.response_format =
        params::response_format(o.get("text").and_then(|t| t.get("format")), "text.format")?;
    req.sampling = params::sampling(o, &["max_output_tokens"], &app.config, &mut notes)?;
    let encrypted_reasoning = match o.get("include") {
        None | Some(Value::Null) => false,
        Some(Value::Array(a)) => a
            .iter()
            .any(|v| v.as_str() == Some("reasoning.encrypted_content")),
        Some(_) => return Err(ApiError::invalid("include", "`include` must be an array")),
    };
    req.retry = params::retry(o)?;
    req.repeats = params::repeats(o, app.config.repeats)?;
    req.strict_schemas = params::strict_schemas(o, app.config.strict_schemas)?;
    let echo: Map<String, Value> = [
        "instructions",
        "previous_response_id",
        "tool_choice",
        "tools",
        "parallel_tool_calls",
        "temperature",
        "top_p",
        "max_output_tokens",
        "text",
        "metadata",
        "reasoning",
    ]
    .iter()
    .map(|k| ((*k).to_owned(), o.get(*k).cloned().unwrap_or(Value::Null)))
    .collect();
    app.log_notes("/v1/responses", &notes);
    Ok(ResponsesRequest {
        req,
        stream: params::opt_bool(o, "stream")?.unwrap_or(false),
        store: params::opt_bool(o, "store")?.unwrap_or(true),
        echo: Value::Object(echo),
        notes,
        namespaces: pool.namespaces,
        encrypted_reasoning,
    })
}

/// `reasoning: {effort}` as the model's reasoning block: demanded where the model's template
/// writes one (as OpenAI's reasoning models always reason; off for effort `none` or
/// `minimal`), else ignored with a note.
fn think(app: &App, reasoning: Option<&Value>, notes: &mut Notes) -> Result<Think, ApiError> {
    let Some(r) = reasoning.filter(|r| !r.is_null()) else {
        return Ok(Think::Off);
    };
    let effort = match r.get("effort") {
        None | Some(Value::Null) => "medium",
        Some(Value::String(e)) => e.as_str(),
        Some(_) => {
            return Err(ApiError::invalid(
                "reasoning.effort",
                "`reasoning.effort` must be a string",
            ));
        }
    };
    if matches!(effort, "none" | "minimal") {
        return Ok(Think::Off);
    }
    if app.runtime.reasons() {
        Ok(Think::Required)
    } else {
        notes.push(
            "`reasoning` was ignored: the model's chat template has no reasoning block".into(),
        );
        Ok(Think::Off)
    }
}

fn call_item(rr: &ResponsesRequest, id: &str, call_id: &str, name: &str, kind: &CallKind) -> Value {
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

/// Output items of a reply, with ids.
fn output_items(app: &App, rr: &ResponsesRequest, r: &Response) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(t) = &r.reasoning {
        items.push(reasoning_item(rr.encrypted_reasoning, &app.new_id("rs"), t));
    }
    if let Some(t) = &r.content {
        items.push(message_item(&app.new_id("msg"), t));
    }
    for c in &r.tool_calls {
        items.push(call_item(rr, &app.new_id("fc"), &c.id, &c.name, &c.kind));
    }
    items
}

/// Responses' usage object.
fn usage_json(u: Option<toolgram_runtime::Usage>) -> Value {
    u.map_or(Value::Null, |u| {
        json!({
        "input_tokens": u.prompt_tokens, "output_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
        "input_tokens_details": {"cached_tokens": u.cached_prompt_tokens},
        "output_tokens_details": {"reasoning_tokens": 0}})
    })
}

fn response_object(
    app: &App,
    id: &str,
    rr: &ResponsesRequest,
    status: &str,
    output: Vec<Value>,
    r: Option<&Response>,
) -> Value {
    let usage = usage_json(r.and_then(|r| r.usage));
    let mut v = json!({"id": id, "object": "response", "created_at": app.now(), "status": status,
        "model": app.model_id(), "output": output, "usage": usage, "error": null,
        "incomplete_details": null, "store": rr.store});
    if let (Value::Object(o), Value::Object(e)) = (&mut v, &rr.echo) {
        for (k, val) in e {
            o.entry(k.clone()).or_insert_with(|| val.clone());
        }
    }
    v["toolgram"] = crate::app::toolgram_json(r, &rr.notes);
    v
}

/// The response object of a finished reply: `incomplete` when `max_output_tokens` cut its text.
fn finished(app: &App, id: &str, rr: &ResponsesRequest, output: Vec<Value>, r: &Response) -> Value {
    if r.finish_reason == toolgram_runtime::FinishReason::Length {
        let mut body = response_object(app, id, rr, "incomplete", output, Some(r));
        body["incomplete_details"] = json!({"reason": "max_output_tokens"});
        body
    } else {
        response_object(app, id, rr, "completed", output, Some(r))
    }
}

fn remember(app: &App, rr: &ResponsesRequest, id: &str, r: &Response, body: &Value) {
    if !rr.store {
        return;
    }
    let mut messages = rr.req.messages.clone();
    messages.push(ChatMessage {
        role: "assistant".into(),
        content: r.content.clone(),
        tool_calls: (!r.tool_calls.is_empty()).then(|| {
            r.tool_calls
                .iter()
                .map(|c| {
                    let args = match &c.kind {
                        CallKind::Function { arguments } => arguments.to_string(),
                        CallKind::Custom { input } => json!({ "input": input }).to_string(),
                    };
                    call_message(&c.id, &c.name, args)
                })
                .collect()
        }),
        tool_call_id: None,
        name: None,
        reasoning_content: None,
    });
    app.store(Stored {
        id: id.to_owned(),
        messages,
        body: body.clone(),
    });
}

/// Answer a non-streamed request.
pub async fn reply(app: Arc<App>, rr: ResponsesRequest) -> Result<HttpResponse, ApiError> {
    let id = app.new_id("resp");
    match crate::run::run(&app, rr.req.clone()).await? {
        Ok(r) => {
            app.metrics.reply(ROUTE, &r, None);
            let output = output_items(&app, &rr, &r);
            let body = finished(&app, &id, &rr, output, &r);
            remember(&app, &rr, &id, &r, &body);
            Ok(axum::Json(body).into_response())
        }
        Err(e) if e.kind() == "truncated" => {
            app.metrics.failed(&e);
            let mut body = response_object(&app, &id, &rr, "incomplete", Vec::new(), None);
            body["incomplete_details"] = json!({"reason": "max_output_tokens"});
            body["usage"] = usage_json(e.usage());
            Ok(axum::Json(body).into_response())
        }
        Err(e) => {
            app.metrics.failed(&e);
            Err(e.into())
        }
    }
}

/// The open output item of a stream.
struct Open {
    index: usize,
    id: String,
    kind: &'static str,
    text: String,
    item: Value,
}

/// Writes the Responses event sequence.
struct Writer {
    tx: tokio::sync::mpsc::Sender<(String, Value)>,
    seq: u64,
    open: Option<Open>,
    done_items: Vec<Value>,
    /// The client went away.
    gone: bool,
    /// Reasoning items carry `encrypted_content`.
    encrypted_reasoning: bool,
}

impl Writer {
    async fn send(&mut self, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.seq);
        self.seq += 1;
        if self.tx.send((kind.to_owned(), data)).await.is_err() {
            self.gone = true;
        }
    }

    async fn close(&mut self) {
        let Some(o) = self.open.take() else { return };
        let (index, id) = (o.index, o.id.clone());
        let item = match o.kind {
            "message" => {
                self.send(
                    "response.output_text.done",
                    json!({"item_id": id, "output_index": index,
                    "content_index": 0, "text": o.text}),
                )
                .await;
                self.send("response.content_part.done", json!({"item_id": id, "output_index": index,
                    "content_index": 0, "part": {"type": "output_text", "text": o.text, "annotations": []}})).await;
                message_item(&id, &o.text)
            }
            "reasoning" => {
                self.send(
                    "response.reasoning_text.done",
                    json!({"item_id": id,
                    "output_index": index, "content_index": 0, "text": o.text}),
                )
                .await;
                reasoning_item(self.encrypted_reasoning, &id, &o.text)
            }
            "function_call" => {
                self.send(
                    "response.function_call_arguments.done",
                    json!({"item_id": id,
                    "output_index": index, "arguments": o.text}),
                )
                .await;
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
                )
                .await;
                let mut item = o.item;
                item["input"] = json!(o.text);
                item["status"] = json!("completed");
                item
            }
        };
        self.send(
            "response.output_item.done",
            json!({"output_index": index, "item": item.clone()}),
        )
        .await;
        self.done_items.push(item);
    }

    async fn open(&mut self, kind: &'static str, id: String, item: Value) {
        self.close().await;
        let index = self.done_items.len();
        self.send(
            "response.output_item.added",
            json!({"output_index": index, "item": item.clone()}),
        )
        .await;
        if kind == "message" {
            self.send("response.content_part.added", json!({"item_id": id, "output_index": index,
                "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}})).await;
        }
        self.open = Some(Open {
            index,
            id,
            kind,
            text: String::new(),
            item,
        });
    }

    async fn delta(&mut self, kind: &'static str, event: &str, text: &str) {
        let Some(o) = self.open.as_mut().filter(|o| o.kind == kind) else {
            return;
        };
        o.text.push_str(text);
        let mut data = json!({"item_id": o.id, "output_index": o.index, "delta": text});
        if matches!(kind, "message" | "reasoning") {
            data["content_index"] = json!(0);
        }
        self.send(event, data).await;
    }
}

/// Answer a streamed request with the Responses event types.
#[allow(
    clippy::too_many_lines,
    reason = "the Responses event sequence, in the order it is sent"
)]
pub async fn stream(app: Arc<App>, rr: ResponsesRequest) -> Result<HttpResponse, ApiError> {
    let id = app.new_id("resp");
    let mut events = crate::run::stream(&app, rr.req.clone())?;
    let first = match events.recv().await {
        Some(Event::Failed(e)) if e.kind() != "truncated" => return Err(e.into()),
        other => other,
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<(String, Value)>(64);
    let mut clock = crate::metrics::StreamClock::start();
    tokio::spawn(async move {
        let mut w = Writer {
            tx,
            seq: 0,
            open: None,
            done_items: Vec::new(),
            gone: false,
            encrypted_reasoning: rr.encrypted_reasoning,
        };
        let created = response_object(&app, &id, &rr, "in_progress", Vec::new(), None);
        w.send("response.created", json!({"response": created.clone()}))
            .await;
        w.send("response.in_progress", json!({"response": created}))
            .await;
        let mut next = first;
        while let Some(event) = next {
            clock.seen(&event);
            match event {
                Event::ReasoningDelta(t) => {
                    if w.open.as_ref().is_none_or(|o| o.kind != "reasoning") {
                        let rid = app.new_id("rs");
                        w.open(
                            "reasoning",
                            rid.clone(),
                            json!({"type": "reasoning", "id": rid, "summary": [], "content": []}),
                        )
                        .await;
                    }
                    w.delta("reasoning", "response.reasoning_text.delta", &t)
                        .await;
                }
                Event::ContentDelta(t) => {
                    if w.open.as_ref().is_none_or(|o| o.kind != "message") {
                        let mid = app.new_id("msg");
                        w.open(
                            "message",
                            mid.clone(),
                            json!({"type": "message", "id": mid,
                            "status": "in_progress", "role": "assistant", "content": []}),
                        )
                        .await;
                    }
                    w.delta("message", "response.output_text.delta", &t).await;
                }
                Event::ToolCallStart {
                    id: call_id,
                    name,
                    custom: is_custom,
                    ..
                } => {
                    let fid = app.new_id("fc");
                    let (kind, mut item) = if is_custom {
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
                    if let Some(ns) = rr.namespaces.get(&name) {
                        item["namespace"] = json!(ns);
                    }
                    w.open(kind, fid, item).await;
                }
                Event::ToolCallDelta {
                    arguments, custom, ..
                } => {
                    if custom {
                        w.delta(
                            "custom_tool_call",
                            "response.custom_tool_call_input.delta",
                            &arguments,
                        )
                        .await;
                    } else {
                        w.delta(
                            "function_call",
                            "response.function_call_arguments.delta",
                            &arguments,
                        )
                        .await;
                    }
                }
                Event::ToolCallEnd { .. } => w.close().await,
                Event::Retry { .. } => {}
                Event::Done(r) => {
                    w.close().await;
                    app.metrics.reply(ROUTE, &r, Some(clock.first_token()));
                    let body = finished(&app, &id, &rr, std::mem::take(&mut w.done_items), &r);
                    remember(&app, &rr, &id, &r, &body);
                    let kind = if body["status"] == "incomplete" {
                        "response.incomplete"
                    } else {
                        "response.completed"
                    };
                    w.send(kind, json!({"response": body})).await;
                    break;
                }
                Event::Failed(e) if e.kind() == "truncated" => {
                    w.close().await;
                    app.metrics.failed(&e);
                    let mut body = response_object(
                        &app,
                        &id,
                        &rr,
                        "incomplete",
                        std::mem::take(&mut w.done_items),
                        None,
                    );
                    body["incomplete_details"] = json!({"reason": "max_output_tokens"});
                    body["usage"] = usage_json(e.usage());
                    w.send("response.incomplete", json!({"response": body}))
                        .await;
                    break;
                }
                Event::Failed(e) => {
                    let err = ApiError::from(e).body();
                    w.send("error", err["error"].clone()).await;
                    break;
                }
            }
            if w.gone {
                // Dropping `events` cancels the run.
                app.metrics.disconnect();
                return;
            }
            next = events.recv().await;
        }
    });
    Ok(crate::sse::named(rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasoning text rides in `encrypted_content` and comes back whole, any text.
    #[test]
    fn encrypted_reasoning_round_trips() {
        for text in ["", "plain", "ünïcödé\nlines\t\"quotes\" <think>"] {
            let item = json!({"type": "reasoning",
                "encrypted_content": format!("{ENCRYPTED_PREFIX}{}", hex(text))});
            assert_eq!(reasoning_text(&item).as_deref(), Some(text));
        }
        // Another server's opaque blob is not read; the item's own text is.
        let foreign = json!({"type": "reasoning", "encrypted_content": "gAAAA…",
            "summary": [{"type": "summary_text", "text": "thought"}]});
        assert_eq!(reasoning_text(&foreign).as_deref(), Some("thought"));
        assert_eq!(unhex("zz"), None);
    }
}
