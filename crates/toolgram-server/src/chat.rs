//! `POST /v1/chat/completions`: OpenAI's Chat Completions request read into a runtime
//! [`Request`], the reply written back as a `chat.completion`, or streamed as
//! `chat.completion.chunk`s exactly as OpenAI sends them (role first, each call's id and name
//! in its first delta and its arguments after, the finish reason, optional usage, `[DONE]`).
//! Calls never appear in `content`: the runtime's events keep them apart. This module must
//! not run the pipeline itself.

use crate::app::App;
use crate::error::ApiError;
use crate::params::{self, Notes};
use axum::response::{IntoResponse, Response as HttpResponse};
use serde_json::{Value, json};
use std::sync::Arc;
use toolgram_core::ChatMessage;
use toolgram_runtime::{Call, CallKind, Event, Request, Response, RunError};

/// A request read from the body, with what the reply needs to say.
pub struct ChatRequest {
    /// The runtime request.
    pub req: Request,
    /// Stream the reply as chunks.
    pub stream: bool,
    /// Send a last chunk with the usage.
    pub include_usage: bool,
    /// What was not done as asked.
    pub notes: Notes,
}

/// This route, as the metrics name it.
const ROUTE: &str = "/v1/chat/completions";

/// Fields read and honoured.
const HONOURED: &[&str] = &[
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "max_completion_tokens",
    "max_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "logit_bias",
    "max_attempts",
    "repeats",
    "strict_schemas",
    "stream",
    "stream_options",
    "n",
];

/// Fields accepted that change nothing a single local model does.
const ACCEPTED: &[&str] = &[
    "user",
    "metadata",
    "store",
    "prompt_cache_key",
    "safety_identifier",
    "service_tier",
];

/// The roles a Chat Completions message may have.
const ROLES: &[&str] = &["system", "developer", "user", "assistant", "tool"];

/// Read a Chat Completions body.
pub fn read(app: &App, body: &Value) -> Result<ChatRequest, ApiError> {
    let o = params::object(body)?;
    app.check_model(params::opt_str(o, "model")?)?;
    let messages = match o.get("messages") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(ApiError::invalid("messages", "`messages` is empty")),
        _ => return Err(ApiError::invalid("messages", "`messages` must be an array")),
    };
    let messages: Vec<ChatMessage> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("");
            if !ROLES.contains(&role) {
                return Err(ApiError::invalid(
                    &format!("messages[{i}].role"),
                    format!("unknown role `{role}`: one of {}", ROLES.join(", ")),
                ));
            }
            serde_json::from_value(with_custom_calls_as_functions(m))
                .map_err(|e| ApiError::invalid(&format!("messages[{i}]"), e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    if let Some(n) = params::opt_uint(o, "n")?
        && n != 1
    {
        return Err(ApiError::invalid("n", "only `n` = 1 is supported"));
    }
    let mut notes = params::ignored_fields(o, HONOURED, ACCEPTED);
    let pool = params::tools(o, app.config.hosted_tools)?;
    let has_tools = !pool.tools.tools().is_empty();
    let mut req = Request::new(messages, pool.tools);
    req.not_offered = pool.not_offered;
    req.tool_choice = params::tool_choice(o, has_tools)?;
    req.parallel_tool_calls = params::opt_bool(o, "parallel_tool_calls")?.unwrap_or(true);
    req.response_format = params::response_format(o.get("response_format"), "response_format")?;
    req.sampling = params::sampling(
        o,
        &["max_completion_tokens", "max_tokens"],
        &app.config,
        &mut notes,
    )?;
    req.retry = params::retry(o)?;
    req.repeats = params::repeats(o, app.config.repeats)?;
    req.strict_schemas = params::strict_schemas(o, app.config.strict_schemas)?;
    let stream = params::opt_bool(o, "stream")?.unwrap_or(false);
    let include_usage = o
        .get("stream_options")
        .and_then(|s| s.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    app.log_notes("/v1/chat/completions", &notes);
    Ok(ChatRequest {
        req,
        stream,
        include_usage,
        notes,
    })
}

/// An earlier assistant message's custom-tool calls (`{"type":"custom","custom":{"name",
/// "input"}}`) in the function shape the conversation renders (`{"input": …}` arguments), and
/// `developer` as `system`.
fn with_custom_calls_as_functions(m: &Value) -> Value {
    let mut m = m.clone();
    if m.get("role").and_then(Value::as_str) == Some("developer") {
        m["role"] = json!("system");
    }
    if let Some(calls) = m.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for c in calls {
            if let Some(custom) = c.get("custom").cloned() {
                let input = custom.get("input").and_then(Value::as_str).unwrap_or("");
                *c = json!({"id": c.get("id").cloned().unwrap_or(Value::Null), "type": "function",
                    "function": {"name": custom.get("name").cloned().unwrap_or(Value::Null),
                        "arguments": json!({ "input": input }).to_string()}});
            }
        }
    }
    m
}

/// The `chat.completion` object.
pub fn completion(app: &App, id: &str, r: &Response, notes: &[String]) -> Value {
    let mut message = r.openai_message();
    message["refusal"] = Value::Null;
    json!({
        "id": id, "object": "chat.completion", "created": app.now(), "model": app.model_id(),
        "choices": [{"index": 0, "message": message, "finish_reason": r.finish_reason.as_str(),
            "logprobs": null}],
        "usage": r.usage.map_or(Value::Null, toolgram_runtime::usage_json),
        "system_fingerprint": null,
        "toolgram": crate::app::toolgram_json(Some(r), notes),
    })
}

/// The reply to a generation cut before any call was complete: `finish_reason: "length"`,
/// no half call, the tokens it used.
pub fn truncated(app: &App, id: &str, e: &RunError) -> Value {
    json!({
        "id": id, "object": "chat.completion", "created": app.now(), "model": app.model_id(),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null},
            "finish_reason": "length", "logprobs": null}],
        "usage": e.usage().map_or(Value::Null, toolgram_runtime::usage_json),
        "toolgram": {"error": {"type": e.kind(), "message": e.to_string()}},
    })
}

/// Answer a non-streamed request.
pub async fn reply(app: Arc<App>, chat: ChatRequest) -> Result<HttpResponse, ApiError> {
    let id = app.new_id("chatcmpl");
    match crate::run::run(&app, chat.req).await? {
        Ok(r) => {
            app.metrics.reply(ROUTE, &r, None);
            Ok(axum::Json(completion(&app, &id, &r, &chat.notes)).into_response())
        }
        Err(e) if e.kind() == "truncated" => {
            app.metrics.failed(&e);
            Ok(axum::Json(truncated(&app, &id, &e)).into_response())
        }
        Err(e) => {
            app.metrics.failed(&e);
            Err(e.into())
        }
    }
}

/// One chunk.
fn chunk(app: &App, id: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({"id": id, "object": "chat.completion.chunk", "created": app.now(),
        "model": app.model_id(), "system_fingerprint": null,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}]})
}

/// The chunks one event becomes (none for some).
fn chunks_of(app: &App, id: &str, event: &Event) -> Vec<Value> {
    let delta = match event {
        Event::ContentDelta(t) => json!({"content": t}),
        Event::ReasoningDelta(t) => json!({"reasoning_content": t}),
        Event::ToolCallStart {
            index,
            id: call_id,
            name,
            custom: is_custom,
        } => {
            let kind = if *is_custom {
                CallKind::Custom {
                    input: String::new(),
                }
            } else {
                CallKind::Function {
                    arguments: Value::Null,
                }
            };
            let call = Call {
                id: call_id.clone(),
                name: name.clone(),
                kind,
            };
            let mut c = call.to_openai();
            c["index"] = json!(index);
            if !is_custom {
                c["function"]["arguments"] = json!("");
            }
            json!({"tool_calls": [c]})
        }
        Event::ToolCallDelta {
            index,
            arguments,
            custom,
        } => {
            if *custom {
                json!({"tool_calls": [{"index": index, "custom": {"input": arguments}}]})
            } else {
                json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]})
            }
        }
        _ => return Vec::new(),
    };
    vec![chunk(app, id, delta, None)]
}

/// Answer a streamed request: Server-Sent Events as the reply is decoded.
pub async fn stream(app: Arc<App>, chat: ChatRequest) -> Result<HttpResponse, ApiError> {
    let id = app.new_id("chatcmpl");
    let mut events = crate::run::stream(&app, chat.req)?;
    // An error before anything was decoded is still an HTTP error, not a stream.
    let first = match events.recv().await {
        Some(Event::Failed(e)) if e.kind() != "truncated" => return Err(e.into()),
        other => other,
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Value>(64);
    let include_usage = chat.include_usage;
    let notes = chat.notes;
    let mut clock = crate::metrics::StreamClock::start();
    tokio::spawn(async move {
        let mut next = first;
        let _ = tx
            .send(chunk(
                &app,
                &id,
                json!({"role": "assistant", "content": null}),
                None,
            ))
            .await;
        while let Some(event) = next {
            clock.seen(&event);
            match event {
                Event::Done(r) => {
                    app.metrics.reply(ROUTE, &r, Some(clock.first_token()));
                    let mut last = chunk(&app, &id, json!({}), Some(r.finish_reason.as_str()));
                    last["toolgram"] = crate::app::toolgram_json(Some(&r), &notes);
                    let _ = tx.send(last).await;
                    if include_usage {
                        let mut u = chunk(&app, &id, json!({}), None);
                        u["choices"] = json!([]);
                        u["usage"] = r.usage.map_or(Value::Null, toolgram_runtime::usage_json);
                        let _ = tx.send(u).await;
                    }
                    break;
                }
                Event::Failed(e) if e.kind() == "truncated" => {
                    app.metrics.failed(&e);
                    let _ = tx.send(chunk(&app, &id, json!({}), Some("length"))).await;
                    if include_usage {
                        let mut u = chunk(&app, &id, json!({}), None);
                        u["choices"] = json!([]);
                        u["usage"] = e.usage().map_or(Value::Null, toolgram_runtime::usage_json);
                        let _ = tx.send(u).await;
                    }
                    break;
                }
                Event::Failed(e) => {
                    let _ = tx.send(ApiError::from(e).body()).await;
                    break;
                }
                other => {
                    for c in chunks_of(&app, &id, &other) {
                        if tx.send(c).await.is_err() {
                            // The client went away; dropping `events` cancels the run.
                            app.metrics.disconnect();
                            return;
                        }
                    }
                }
            }
            next = events.recv().await;
        }
    });
    Ok(crate::sse::data(rx))
}
