//! Chat Completions' stream, written and read: `chat.completion.chunk`s exactly as OpenAI
//! sends them — the role first, text and reasoning deltas, each call's id and name in its
//! first delta and its arguments after, the finish reason (with toolgram's extension object),
//! then the usage chunk when asked for — and chunks joined back into a reply body. Calls never
//! appear in `content`. This module must not touch HTTP or decide when a stream ends.

use crate::append::append;
use crate::call::Reply;
use crate::chat::reply::{Envelope, function_call, usage};
use serde_json::{Map, Value, json};
use toolgram_core::define::reply::Usage;

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

/// More of the text.
pub fn content_chunk(env: &Envelope, text: &str) -> Value {
    chunk(env, json!({"content": text}), None)
}

/// More of the reasoning.
pub fn reasoning_chunk(env: &Envelope, text: &str) -> Value {
    chunk(env, json!({"reasoning_content": text}), None)
}

/// A call begins: its index, id, name and type (a function's arguments start empty).
pub fn call_start_chunk(env: &Envelope, index: usize, id: &str, name: &str, custom: bool) -> Value {
    let mut call = if custom {
        json!({"id": id, "type": "custom", "custom": {"name": name, "input": ""}})
    } else {
        function_call(id, name, String::new())
    };
    call["index"] = json!(index);
    chunk(env, json!({"tool_calls": [call]}), None)
}

/// More of a call's arguments (a custom tool's input).
pub fn call_delta_chunk(env: &Envelope, index: usize, text: &str, custom: bool) -> Value {
    let call = if custom {
        json!({"index": index, "custom": {"input": text}})
    } else {
        json!({"index": index, "function": {"arguments": text}})
    };
    chunk(env, json!({"tool_calls": [call]}), None)
}

/// The last chunks: the finish reason (with the `toolgram` object when the run ended with a
/// reply), then the usage chunk when `include_usage`.
pub fn finish_chunks(
    env: &Envelope,
    finish: &str,
    toolgram: Option<Value>,
    used: Option<Usage>,
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
        u["usage"] = used.map_or(Value::Null, usage);
        out.push(u);
    }
    out
}

/// The last chunks of a finished reply: [`finish_chunks`], after an empty `content` delta where
/// the reply has neither text nor calls. The role chunk opens with `content: null` (a call may
/// follow); a client that joins the deltas, as OpenAI's SDKs do, would keep that null where the
/// non-streamed reply writes `""` (and send it back to a template that cannot render it).
pub fn reply_end_chunks(
    env: &Envelope,
    r: &Reply,
    toolgram: Option<Value>,
    include_usage: bool,
) -> Vec<Value> {
    let mut out = Vec::new();
    if r.content.is_none_or(str::is_empty) && r.calls.is_empty() {
        out.push(content_chunk(env, ""));
    }
    out.extend(finish_chunks(
        env,
        r.finish_reason.as_str(),
        toolgram,
        r.usage,
        include_usage,
    ));
    out
}

/// The last chunks of a stream cut before any call was complete, as [`crate::chat::reply::truncated`] writes
/// the reply: an empty `content` delta, then `finish_reason: "length"` with `toolgram` (which
/// says why).
pub fn truncated_chunks(
    env: &Envelope,
    used: Option<Usage>,
    toolgram: Value,
    include_usage: bool,
) -> Vec<Value> {
    let mut out = vec![content_chunk(env, "")];
    out.extend(finish_chunks(
        env,
        "length",
        Some(toolgram),
        used,
        include_usage,
    ));
    out
}

/// The text one `chat.completion.chunk` adds to the assistant's content (none: `""`).
pub fn content_delta(chunk: &Value) -> &str {
    chunk
        .pointer("/choices/0/delta/content")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `choices[].delta` chunks joined into a reply body: content concatenated, `tool_calls` by
/// index with their name and argument pieces concatenated, and the `usage` a chunk reports
/// (the last one, under `stream_options.include_usage`).
pub fn assemble(chunks: &[Value]) -> Value {
    let mut content = String::new();
    let mut calls: Vec<Map<String, Value>> = Vec::new();
    let usage = chunks
        .iter()
        .rev()
        .find_map(|c| c.get("usage").filter(|u| u.is_object()));
    for c in chunks {
        let Some(delta) = c.pointer("/choices/0/delta") else {
            continue;
        };
        content.push_str(content_delta(c));
        for tc in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = tc.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            while calls.len() <= i {
                calls.push(Map::from_iter([
                    ("id".to_owned(), json!("")),
                    ("type".to_owned(), json!("function")),
                    ("function".to_owned(), json!({"name": "", "arguments": ""})),
                ]));
            }
            let call = &mut calls[i];
            if let Some(id) = tc.get("id").and_then(Value::as_str) {
                call.insert("id".into(), json!(id));
            }
            if let Some(f) = call.get_mut("function") {
                if let Some(n) = tc.pointer("/function/name").and_then(Value::as_str) {
                    append(&mut f["name"], n);
                }
                if let Some(a) = tc.pointer("/function/arguments").and_then(Value::as_str) {
                    append(&mut f["arguments"], a);
                }
            }
        }
    }
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls.into_iter().map(Value::Object).collect());
    }
    let mut body = json!({"choices": [{"index": 0, "message": message}]});
    if let Some(u) = usage {
        body["usage"] = u.clone();
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::reply::{read_calls, read_text};

    /// A stream written and assembled reads as the reply: text and the call's arguments.
    #[test]
    fn a_stream_assembled_reads_back_the_reply() {
        let env = Envelope {
            id: "chatcmpl-1".into(),
            created: 0,
            model: "m".into(),
        };
        let mut chunks = vec![role_chunk(&env), content_chunk(&env, "Look")];
        chunks.push(content_chunk(&env, "ing."));
        chunks.push(call_start_chunk(&env, 0, "call_1", "get_weather", false));
        chunks.push(call_delta_chunk(&env, 0, "{\"city\":", false));
        chunks.push(call_delta_chunk(&env, 0, "\"Paris\"}", false));
        let used = toolgram_core::define::reply::Usage {
            prompt_tokens: 40,
            completion_tokens: 12,
            cached_prompt_tokens: 30,
        };
        chunks.extend(finish_chunks(&env, "tool_calls", None, Some(used), true));
        let body = assemble(&chunks);
        assert_eq!(
            crate::chat::reply::read_usage(&body),
            (Some(40), Some(12), Some(30)),
            "the usage chunk is kept"
        );
        assert_eq!(read_text(&body).as_deref(), Some("Looking."));
        let calls = read_calls(&body).expect("reads");
        assert_eq!(calls.len(), 1);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("call_1", "get_weather")
        );
        assert_eq!(calls[0].arguments, json!({"city": "Paris"}));
    }

    /// A reply with neither text nor calls ends with an empty `content` delta, so a client
    /// joining deltas reads `""` (the role chunk's null otherwise stands); one with text or a
    /// call does not get one.
    #[test]
    fn a_reply_with_neither_text_nor_calls_streams_an_empty_text() {
        let env = Envelope {
            id: "chatcmpl-1".into(),
            created: 0,
            model: "m".into(),
        };
        let reply = |content, calls| Reply {
            reasoning: None,
            content,
            calls,
            finish_reason: toolgram_core::define::reply::FinishReason::Stop,
            usage: None,
        };
        let empty = reply_end_chunks(&env, &reply(None, &[]), None, false);
        assert_eq!(
            empty[0].pointer("/choices/0/delta/content"),
            Some(&json!(""))
        );
        assert_eq!(
            empty[1].pointer("/choices/0/finish_reason"),
            Some(&json!("stop"))
        );
        let text = reply_end_chunks(&env, &reply(Some("hi"), &[]), None, false);
        assert_eq!(text.len(), 1, "only the finish chunk: {text:?}");
        // A stream cut before any call was complete ends as the non-streamed reply reads.
        let why = json!({"error": {"type": "truncated", "message": "stopped"}});
        let cut = truncated_chunks(&env, None, why, false);
        let body = assemble(&cut);
        assert_eq!(read_text(&body).as_deref(), Some(""));
        assert_eq!(cut[1]["toolgram"]["error"]["type"], "truncated");
        assert_eq!(
            cut[1].pointer("/choices/0/finish_reason"),
            Some(&json!("length"))
        );
    }
}
