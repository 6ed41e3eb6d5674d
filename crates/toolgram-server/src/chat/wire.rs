//! OpenAI's Chat Completions wire shape: a run's [`Response`] as a `chat.completion` (the
//! runtime's one assistant-message builder, plus `refusal: null`), a reply cut before any call
//! was complete as one with `finish_reason: "length"`, and a run's [`Event`]s as
//! `chat.completion.chunk`s exactly as OpenAI sends them — role first, each call's id and name
//! in its first delta and its arguments after, the finish reason with the `toolgram` object,
//! then the usage chunk when asked for. Calls never appear in `content`: the runtime's events
//! keep them apart. Pure mapping: this module must not read requests or touch HTTP.

use serde_json::{Value, json};
use toolgram_runtime::{Call, CallKind, Event, Response, RunError, Usage, usage_json};

/// What every object of one reply repeats: its id, creation time and model.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// `chatcmpl-…`.
    pub id: String,
    /// Unix seconds.
    pub created: u64,
    /// The model id the server answers as.
    pub model: String,
}

/// The `chat.completion` object; `toolgram` is the reply's `toolgram` object.
pub fn completion(env: &Envelope, r: &Response, toolgram: Value) -> Value {
    let mut message = r.openai_message();
    message["refusal"] = Value::Null;
    json!({
        "id": env.id, "object": "chat.completion", "created": env.created, "model": env.model,
        "choices": [{"index": 0, "message": message, "finish_reason": r.finish_reason.as_str(),
            "logprobs": null}],
        "usage": r.usage.map_or(Value::Null, usage_json),
        "system_fingerprint": null,
        "toolgram": toolgram,
    })
}

/// The reply to a generation cut before any call was complete: `finish_reason: "length"`,
/// no half call, the tokens it used.
pub fn truncated(env: &Envelope, e: &RunError) -> Value {
    json!({
        "id": env.id, "object": "chat.completion", "created": env.created, "model": env.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null},
            "finish_reason": "length", "logprobs": null}],
        "usage": e.usage().map_or(Value::Null, usage_json),
        "toolgram": {"error": {"type": e.kind(), "message": e.to_string()}},
    })
}

/// One chunk.
pub fn chunk(env: &Envelope, delta: Value, finish: Option<&str>) -> Value {
    json!({"id": env.id, "object": "chat.completion.chunk", "created": env.created,
        "model": env.model, "system_fingerprint": null,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}]})
}

/// The first chunk: the role.
pub fn role_chunk(env: &Envelope) -> Value {
    chunk(env, json!({"role": "assistant", "content": null}), None)
}

/// The chunks a decoded event becomes (none for the end events: see [`finish_chunks`]).
pub fn event_chunks(env: &Envelope, event: &Event) -> Vec<Value> {
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
    vec![chunk(env, delta, None)]
}

/// The last chunks: the finish reason (with the `toolgram` object when the run ended with a
/// reply), then the usage chunk when `include_usage`.
pub fn finish_chunks(
    env: &Envelope,
    finish: &str,
    toolgram: Option<Value>,
    usage: Option<Usage>,
    include_usage: bool,
) -> Vec<Value> {
    let mut last = chunk(env, json!({}), Some(finish));
    if let Some(t) = toolgram {
        last["toolgram"] = t;
    }
    let mut out = vec![last];
    if include_usage {
        let mut u = chunk(env, json!({}), None);
        u["choices"] = json!([]);
        u["usage"] = usage.map_or(Value::Null, usage_json);
        out.push(u);
    }
    out
}
