//! Ollama's `/api/chat`, as its clients send and read it: Chat Completions' messages and
//! `tool_calls` lists (read by [`crate::chat`]'s readers), sampling under `options`
//! (`temperature`, `num_predict`), a reply's `message`, its usage (`prompt_eval_count`,
//! `eval_count`), and JSON-line streams of `message` chunks joined back into a reply. This
//! module must not touch HTTP or decide what a request asks for.

use crate::chat::reply::read_tool_calls;
use crate::error::WireError;
use crate::read::count;
use serde_json::{Map, Value, json};
use toolgram_core::ToolCall;

/// The `options` object for a temperature and a token limit; `None` when neither is set.
pub fn options(temperature: Option<f32>, max_tokens: Option<usize>) -> Option<Value> {
    let mut opts = Map::new();
    if let Some(t) = temperature {
        opts.insert("temperature".into(), json!(t));
    }
    if let Some(n) = max_tokens {
        opts.insert("num_predict".into(), json!(n));
    }
    (!opts.is_empty()).then_some(Value::Object(opts))
}

/// A reply's text (`message.content`); `None` when it has none.
pub fn read_text(body: &Value) -> Option<String> {
    body.pointer("/message/content")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// A reply's calls (`message.tool_calls`, Chat's shape).
pub fn read_calls(body: &Value) -> Result<Vec<ToolCall>, WireError> {
    read_tool_calls(body.pointer("/message/tool_calls"), "message.tool_calls")
}

/// A reply's usage: prompt and generated tokens (Ollama does not say what it cached).
pub fn read_usage(body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
    (
        count(body, "/prompt_eval_count"),
        count(body, "/eval_count"),
        None,
    )
}

/// A stream's `message` chunks joined: content concatenated, calls in order.
pub fn assemble(chunks: &[Value]) -> Value {
    let mut content = String::new();
    let mut calls: Vec<Value> = Vec::new();
    for c in chunks {
        content.push_str(
            c.pointer("/message/content")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        calls.extend(
            c.pointer("/message/tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .cloned(),
        );
    }
    json!({"message": {"role": "assistant", "content": content, "tool_calls": calls}})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks joined read as one reply: text and the call, with its arguments as sent.
    #[test]
    fn a_stream_assembled_reads_as_a_reply() {
        let chunks = [
            json!({"message": {"content": "Look"}}),
            json!({"message": {"content": "ing.", "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}}),
            json!({"done": true, "prompt_eval_count": 12, "eval_count": 3}),
        ];
        let body = assemble(&chunks);
        assert_eq!(read_text(&body).as_deref(), Some("Looking."));
        let calls = read_calls(&body).expect("reads");
        assert_eq!(calls[0].id, "call_0");
        assert_eq!(calls[0].arguments, json!({"city": "Paris"}));
        assert_eq!(read_usage(&chunks[2]), (Some(12), Some(3), None));
        assert_eq!(options(None, None), None);
        assert_eq!(options(None, Some(5)), Some(json!({"num_predict": 5})));
    }
}
