//! Chat Completions' reply, written and read. Written: a function call
//! (`{"id","type":"function","function":{"name","arguments"}}`, arguments as text), a custom
//! tool's call (`{"id","type":"custom","custom":{"name","input"}}`), the assistant message
//! (role, `content`, `reasoning_content` when there is one, `tool_calls` when there are calls)
//! — the one builder of each: a run's reply, `toolgram parse`'s, the server's — the usage
//! object, and the `chat.completion` around them. Read: a reply's text, calls (custom calls
//! as `{"input": text}`) and usage (llama-server's `timings.cache_n` for the cached tokens
//! where OpenAI's field is absent). This module must not read requests.

use crate::call::{Call, CallKind, Reply};
use crate::error::WireError;
use crate::read::{call as read_call, count, string_args};
use serde_json::{Value, json};
use toolgram_core::ToolCall;
use toolgram_core::define::reply::Usage;

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

/// A function call, its arguments as text.
pub fn function_call(id: &str, name: &str, arguments: String) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// A call in OpenAI's shape: a function call, or a custom tool's call with its input.
pub fn call(c: &Call) -> Value {
    match &c.kind {
        CallKind::Function { arguments } => function_call(&c.id, &c.name, arguments.to_string()),
        CallKind::Custom { input } => json!({"id": c.id, "type": "custom",
            "custom": {"name": c.name, "input": input}}),
    }
}

/// An assistant message: role, `content`, `reasoning_content` when there is one,
/// `tool_calls` when there are calls. `content` is null only beside calls: a reply with neither
/// text nor calls has `""`, as OpenAI writes it (a client that sends the message back, as
/// BFCL's multi-turn handler does, then sends a text every chat template can render).
pub fn assistant_message(
    content: Option<&str>,
    reasoning: Option<&str>,
    tool_calls: Vec<Value>,
) -> Value {
    let content = content.or(tool_calls.is_empty().then_some(""));
    let mut msg = json!({"role": "assistant", "content": content});
    if let Some(r) = reasoning {
        msg["reasoning_content"] = json!(r);
    }
    if !tool_calls.is_empty() {
        msg["tool_calls"] = Value::Array(tool_calls);
    }
    msg
}

/// A finished reply's assistant message.
pub fn message(r: &Reply) -> Value {
    assistant_message(r.content, r.reasoning, r.calls.iter().map(call).collect())
}

/// OpenAI's usage object, cached prompt tokens under `prompt_tokens_details`.
pub fn usage(u: Usage) -> Value {
    json!({
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_prompt_tokens},
    })
}

/// The `chat.completion` object (the assistant message plus `refusal: null`); `toolgram` is
/// the extension object.
pub fn completion(env: &Envelope, r: &Reply, toolgram: Value) -> Value {
    let mut message = message(r);
    message["refusal"] = Value::Null;
    json!({
        "id": env.id, "object": "chat.completion", "created": env.created, "model": env.model,
        "choices": [{"index": 0, "message": message, "finish_reason": r.finish_reason.as_str(),
            "logprobs": null}],
        "usage": r.usage.map_or(Value::Null, usage),
        "system_fingerprint": null,
        "toolgram": toolgram,
    })
}

/// The reply to a generation cut before any call was complete: `finish_reason: "length"`,
/// no half call (an empty text), the tokens it used, and `toolgram` (which says why).
pub fn truncated(env: &Envelope, used: Option<Usage>, toolgram: Value) -> Value {
    json!({
        "id": env.id, "object": "chat.completion", "created": env.created, "model": env.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "", "refusal": null},
            "finish_reason": "length", "logprobs": null}],
        "usage": used.map_or(Value::Null, usage),
        "toolgram": toolgram,
    })
}

/// A reply's text (`choices[0].message.content`, empty when null); `None` when it has no
/// `choices[0].message`.
pub fn read_text(body: &Value) -> Option<String> {
    let msg = body.pointer("/choices/0/message")?;
    Some(
        msg.get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    )
}

/// A reply's calls (`choices[0].message.tool_calls`).
pub fn read_calls(body: &Value) -> Result<Vec<ToolCall>, WireError> {
    read_tool_calls(
        body.pointer("/choices/0/message/tool_calls"),
        "choices[0].message.tool_calls",
    )
}

/// A `tool_calls` list in Chat's shape (Ollama's replies carry one too), at `at`: function
/// calls with their arguments as a JSON string, custom calls as `{"input": text}`.
pub fn read_tool_calls(list: Option<&Value>, at: &str) -> Result<Vec<ToolCall>, WireError> {
    let mut calls = Vec::new();
    for (i, c) in list
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let id = c.get("id").and_then(Value::as_str).unwrap_or("");
        if let Some(custom) = c.get("custom") {
            let name = custom.get("name").and_then(Value::as_str).unwrap_or("");
            let text = custom.get("input").cloned().unwrap_or(Value::Null);
            calls.push(read_call(id, i, name, json!({ "input": text })));
            continue;
        }
        let name = c
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let args = string_args(c.pointer("/function/arguments").unwrap_or(&Value::Null))
            .map_err(|m| WireError::invalid(format!("{at}[{i}].function.arguments"), m))?;
        calls.push(read_call(id, i, name, args));
    }
    Ok(calls)
}

/// A reply's usage: `usage.prompt_tokens`, `completion_tokens`, and the cached tokens
/// (`prompt_tokens_details.cached_tokens`, else llama-server's `timings.cache_n`).
pub fn read_usage(body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
    (
        count(body, "/usage/prompt_tokens"),
        count(body, "/usage/completion_tokens"),
        count(body, "/usage/prompt_tokens_details/cached_tokens")
            .or_else(|| count(body, "/timings/cache_n")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the server writes, the provider reads back: text, calls (a custom call's input
    /// too) and usage.
    #[test]
    fn a_completion_written_reads_back_the_same() {
        let calls = crate::fixtures::calls();
        let env = Envelope {
            id: "chatcmpl-1".into(),
            created: 0,
            model: "m".into(),
        };
        let r = crate::fixtures::reply(None, Some("Looking."), &calls);
        let body = completion(&env, &r, json!({}));
        assert_eq!(read_text(&body).as_deref(), Some("Looking."));
        let read_back = read_calls(&body).expect("reads");
        assert_eq!(read_back[0].arguments, json!({"city": "Paris"}));
        assert_eq!(read_back[1].arguments, json!({"input": "SELECT 1"}));
        assert_eq!(read_back[1].id, "call_2");
        assert_eq!(read_usage(&body), (Some(100), Some(7), Some(60)));
    }

    /// `content` is null only beside calls; a reply with neither is an empty text.
    #[test]
    fn content_is_null_only_beside_calls() {
        let call = function_call("call_1", "f", "{}".into());
        assert!(assistant_message(None, None, vec![call])["content"].is_null());
        let empty = assistant_message(None, None, Vec::new());
        assert_eq!(empty["content"], "");
        assert!(empty.get("tool_calls").is_none());
        assert_eq!(
            assistant_message(Some("hi"), None, Vec::new())["content"],
            "hi"
        );
    }

    #[test]
    fn arguments_that_are_not_json_name_their_call() {
        let body = json!({"choices": [{"message": {"tool_calls": [
            {"id": "a", "function": {"name": "f", "arguments": "{"}}]}}]});
        let e = read_calls(&body).expect_err("refused");
        assert_eq!(
            e.param,
            "choices[0].message.tool_calls[0].function.arguments"
        );
        assert!(e.message.starts_with("arguments are not JSON"), "{e}");
    }
}
