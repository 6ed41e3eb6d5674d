//! Anthropic's `message` reply, written and read: content blocks (`thinking`, `text`, then one
//! `tool_use` per call), `stop_reason`, usage (`input_tokens` without the tokens read from the
//! cache, which are `cache_read_input_tokens`), and the error body
//! `{"type":"error","error":{"type","message"}}`. This module must not choose a status code.

use crate::call::{CallKind, Reply};
use crate::read::{call, count};
use serde_json::{Value, json};
use toolgram_core::ToolCall;
use toolgram_core::define::message::parts_text;
use toolgram_core::define::reply::{FinishReason, Usage};

/// The `signature` of a thinking block written: Anthropic's clients send thinking blocks back
/// with one; the reader ignores it.
pub const SIGNATURE: &str = "toolgram-unsigned";

/// Anthropic's `stop_reason` for why a reply ended.
pub fn stop_reason(finish: FinishReason) -> &'static str {
    match finish {
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

/// A call's `input`: a function's arguments, or a grammar tool's text as `{"input": …}`.
fn input(kind: &CallKind) -> Value {
    match kind {
        CallKind::Function { arguments } => arguments.clone(),
        CallKind::Custom { input } => json!({ "input": input }),
    }
}

/// The content blocks of a reply: thinking, text, then one `tool_use` per call.
pub fn content(r: &Reply) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(t) = r.reasoning_text() {
        blocks.push(json!({"type": "thinking", "thinking": t, "signature": SIGNATURE}));
    }
    if let Some(t) = r.content_text() {
        blocks.push(json!({"type": "text", "text": t}));
    }
    for c in r.calls {
        blocks
            .push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input(&c.kind)}));
    }
    blocks
}

/// The `message` object of a finished reply; `toolgram` is the extension object.
pub fn message(id: &str, model: &str, r: &Reply, toolgram: Value) -> Value {
    json!({
        "id": id, "type": "message", "role": "assistant", "model": model,
        "content": content(r), "stop_reason": stop_reason(r.finish_reason),
        "stop_sequence": null, "usage": usage(r.usage), "toolgram": toolgram,
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
pub fn error_type(status: u16) -> &'static str {
    match status {
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

/// The error body for a status: `{"type":"error","error":{"type","message"}}`, with the field
/// at fault as `param` and toolgram's details (when not null) as `toolgram`.
pub fn error(status: u16, message: &str, param: Option<&str>, details: &Value) -> Value {
    let mut err = json!({"type": error_type(status), "message": message});
    if let Some(p) = param {
        err["param"] = json!(p);
    }
    if !details.is_null() {
        err["toolgram"] = details.clone();
    }
    json!({"type": "error", "error": err, "request_id": null})
}

/// A reply's text: its `text` blocks joined; `None` when it has no `content` array.
pub fn read_text(body: &Value) -> Option<String> {
    let blocks = body.get("content").and_then(Value::as_array)?;
    let text: Vec<Value> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .cloned()
        .collect();
    Some(parts_text(&text, ""))
}

/// A reply's `tool_use` blocks as calls (`call_{i}` for the `i`th block without an id).
pub fn read_calls(body: &Value) -> Vec<ToolCall> {
    let blocks = body.get("content").and_then(Value::as_array);
    blocks
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|(i, b)| {
            let field = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
            let input = b.get("input").cloned().unwrap_or(Value::Null);
            call(field("id"), i, field("name"), input)
        })
        .collect()
}

/// A reply's usage: prompt tokens (the cached ones added back), generated tokens, cached
/// tokens, each as the body has it.
pub fn read_usage(body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
    let cached = count(body, "/usage/cache_read_input_tokens");
    (
        count(body, "/usage/input_tokens").map(|n| n + cached.unwrap_or(0)),
        count(body, "/usage/output_tokens"),
        cached,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{calls, reply};

    /// Blocks in the order Anthropic writes them; usage splits cached from evaluated tokens;
    /// what the server writes, the provider reads back.
    #[test]
    fn a_message_has_thinking_then_text_then_tool_use_and_reads_back_the_same() {
        let calls = calls();
        let m = message(
            "msg_1",
            "served",
            &reply(Some("hmm"), Some("Let me look."), &calls),
            json!({}),
        );
        let kinds: Vec<&str> = m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["type"].as_str())
            .collect();
        assert_eq!(kinds, ["thinking", "text", "tool_use", "tool_use"]);
        assert_eq!(m["content"][2]["input"], json!({"city": "Paris"}));
        assert_eq!(m["content"][3]["input"], json!({"input": "SELECT 1"}));
        assert_eq!(m["stop_reason"], "tool_use");
        assert_eq!(m["usage"]["input_tokens"], 40);
        assert_eq!(m["usage"]["cache_read_input_tokens"], 60);
        assert_eq!(m["usage"]["output_tokens"], 7);
        assert_eq!(read_text(&m).as_deref(), Some("Let me look."));
        let read_back = read_calls(&m);
        assert_eq!(read_back.len(), 2);
        assert_eq!(
            (read_back[0].id.as_str(), read_back[0].name.as_str()),
            ("call_1", "get_weather")
        );
        assert_eq!(read_back[0].arguments, json!({"city": "Paris"}));
        assert_eq!(read_usage(&m), (Some(100), Some(7), Some(60)));
        let text_only = message("msg_2", "served", &reply(None, Some("Hi"), &[]), json!({}));
        assert_eq!(text_only["stop_reason"], "end_turn");
        assert_eq!(text_only["content"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn errors_take_anthropics_type_for_their_status() {
        let body = error(400, "bad", Some("messages"), &Value::Null);
        assert_eq!(body["type"], "error");
        assert_eq!(body["error"]["type"], "invalid_request_error");
        assert_eq!(body["error"]["param"], "messages");
        assert_eq!(
            error(429, "busy", None, &Value::Null)["error"]["type"],
            "rate_limit_error"
        );
    }
}
