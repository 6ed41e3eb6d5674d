//! Streamed replies (server-sent events, or Ollama's JSON lines) assembled into the same
//! body a non-streamed request returns, so one reader ([`crate::read_reply`]) serves both:
//! OpenAI-style `choices[].delta` (content and `tool_calls` by index, arguments
//! concatenated), Anthropic `content_block_*` events (`input_json_delta` joined), Gemini
//! chunks (parts concatenated), the Responses API's `response.completed` event, Ollama's
//! `message` chunks. Assembly only: it must not interpret calls.

use crate::capability::Kind;
use crate::error::ProviderError;
use serde_json::{Map, Value, json};

fn bad(kind: Kind, m: impl Into<String>) -> ProviderError {
    ProviderError::Reply {
        provider: kind.name().to_owned(),
        message: m.into(),
    }
}

/// The JSON payloads of a stream, in order (`data:` lines of SSE, or bare JSON lines).
fn payloads(kind: Kind, text: &str) -> Result<Vec<Value>, ProviderError> {
    text.lines()
        .map(str::trim)
        .filter_map(|l| match l.strip_prefix("data:") {
            Some(d) => Some(d.trim()),
            None if l.starts_with('{') => Some(l),
            None => None,
        })
        .filter(|d| !d.is_empty() && *d != "[DONE]")
        .map(|d| {
            serde_json::from_str(d).map_err(|e| bad(kind, format!("stream chunk is not JSON: {e}")))
        })
        .collect()
}

fn push_str(slot: &mut Value, piece: &str) {
    let mut s = slot.as_str().unwrap_or("").to_owned();
    s.push_str(piece);
    *slot = Value::String(s);
}

/// Assemble a streamed reply into the provider's non-streamed reply body.
pub fn assemble(kind: Kind, text: &str) -> Result<Value, ProviderError> {
    let chunks = payloads(kind, text)?;
    match kind {
        Kind::Anthropic => {
            let mut blocks: Vec<Value> = Vec::new();
            let mut partial: Vec<String> = Vec::new();
            for c in &chunks {
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
                        match (d.get("type").and_then(Value::as_str), blocks.get_mut(index)) {
                            (Some("text_delta"), Some(b)) => {
                                push_str(&mut b["text"], d["text"].as_str().unwrap_or(""))
                            }
                            (Some("input_json_delta"), Some(_)) => {
                                partial[index].push_str(d["partial_json"].as_str().unwrap_or(""))
                            }
                            _ => {}
                        }
                    }
                    _ => {}
                }
            }
            for (b, json_text) in blocks.iter_mut().zip(&partial) {
                if b.get("type").and_then(Value::as_str) == Some("tool_use")
                    && !json_text.is_empty()
                {
                    b["input"] = serde_json::from_str(json_text)
                        .map_err(|e| bad(kind, format!("tool input is not JSON: {e}")))?;
                }
            }
            Ok(json!({"content": blocks}))
        }
        Kind::Gemini => {
            let parts: Vec<Value> = chunks
                .iter()
                .filter_map(|c| {
                    c.pointer("/candidates/0/content/parts")
                        .and_then(Value::as_array)
                })
                .flatten()
                .cloned()
                .collect();
            let text: String = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            let mut merged: Vec<Value> = parts
                .into_iter()
                .filter(|p| p.get("text").is_none())
                .collect();
            if !text.is_empty() {
                merged.insert(0, json!({"text": text}));
            }
            Ok(json!({"candidates": [{"content": {"role": "model", "parts": merged}}]}))
        }
        Kind::OpenAiResponses => chunks
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some("response.completed"))
            .and_then(|c| c.get("response").cloned())
            .ok_or_else(|| bad(kind, "the stream has no response.completed event")),
        Kind::Ollama => {
            let mut content = String::new();
            let mut calls: Vec<Value> = Vec::new();
            for c in &chunks {
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
            Ok(json!({"message": {"role": "assistant", "content": content, "tool_calls": calls}}))
        }
        Kind::OpenAiChat | Kind::LlamaServer | Kind::Vllm | Kind::Sglang => {
            let mut content = String::new();
            let mut calls: Vec<Map<String, Value>> = Vec::new();
            for c in &chunks {
                let Some(delta) = c.pointer("/choices/0/delta") else {
                    continue;
                };
                content.push_str(delta.get("content").and_then(Value::as_str).unwrap_or(""));
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
                            push_str(&mut f["name"], n);
                        }
                        if let Some(a) = tc.pointer("/function/arguments").and_then(Value::as_str) {
                            push_str(&mut f["arguments"], a);
                        }
                    }
                }
            }
            let mut message = json!({"role": "assistant", "content": content});
            if !calls.is_empty() {
                message["tool_calls"] =
                    Value::Array(calls.into_iter().map(Value::Object).collect());
            }
            Ok(json!({"choices": [{"index": 0, "message": message}]}))
        }
    }
}
