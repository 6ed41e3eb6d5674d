//! Anthropic Messages, as api.anthropic.com speaks it: `system` apart from `messages`, tool
//! results as `tool_result` blocks, strict tools with `input_schema` through the anthropic
//! profile, its `tool_choice` modes, `content` blocks back, `content_block_*` streams. Shapes
//! only: the URL, key and header are the `anthropic` row's in the registry.

use crate::dialect::reply::object_call;
use crate::dialect::request::{common_fields, note_fallbacks, profiled, prompt_system};
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Body, Dialect, Kind, ReadError, RenderInput};
use crate::stream::{bad, push_str};
use crate::usage::count;
use serde_json::{Value, json};
use toolgram_core::define::message::parts_text;
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};

/// Anthropic Messages.
#[derive(Debug)]
pub(crate) struct Messages;

impl Dialect for Messages {
    fn profile(&self) -> Profile {
        Profile::Anthropic
    }

    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value {
        let (_, msgs) = messages(input.messages);
        json!({"max_tokens": 1024, "system": prompt_system(input, pool), "messages": msgs})
    }

    fn strict_tools(&self, input: &RenderInput, pool: &ToolSet, notes: &mut Vec<String>) -> Body {
        strict(input, pool, notes)
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        common_fields(input, body, "max_tokens");
        "/v1/messages".to_owned()
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        let blocks = body
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| ReadError::shape(kind, "no `content` array"))?;
        Ok(parts_text(blocks, ""))
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        let blocks = body.get("content").and_then(Value::as_array);
        Ok(blocks
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(|(i, b)| object_call(b, i, ["id", "name", "input"]))
            .collect())
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        let cached = count(body, "/usage/cache_read_input_tokens");
        // Anthropic's input_tokens leaves out the tokens read from its cache.
        (
            count(body, "/usage/input_tokens").map(|n| n + cached.unwrap_or(0)),
            count(body, "/usage/output_tokens"),
            cached,
        )
    }

    fn assemble(&self, kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        let mut blocks: Vec<Value> = Vec::new();
        let mut partial: Vec<String> = Vec::new();
        for c in chunks {
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
            if b.get("type").and_then(Value::as_str) == Some("tool_use") && !json_text.is_empty() {
                b["input"] = serde_json::from_str(json_text)
                    .map_err(|e| bad(kind, format!("tool input is not JSON: {e}")))?;
            }
        }
        Ok(json!({"content": blocks}))
    }
}

/// Anthropic's `system` string and `messages` (tool results as `tool_result` blocks).
fn messages(messages: &[ChatMessage]) -> (String, Vec<Value>) {
    let mut system = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        let text = m.content.clone().unwrap_or_default();
        match m.role.as_str() {
            "system" => system.push(text),
            "tool" => out.push(json!({"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": m.tool_call_id.clone().unwrap_or_default(), "content": text}]})),
            "assistant" => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in m.tool_calls.iter().flatten() {
                    let input: Value =
                        serde_json::from_str(&c.function.arguments).unwrap_or_else(|_| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.function.name, "input": input}));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
            }
            _ => out.push(json!({"role": "user", "content": text})),
        }
    }
    (system.join("\n\n"), out)
}

/// Messages with strict tools.
fn strict(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<Value, ProviderError> {
    let (system, messages) = messages(input.messages);
    let mut body = json!({"max_tokens": 1024, "messages": messages});
    if !system.is_empty() {
        body["system"] = json!(system);
    }
    note_fallbacks(pool, false, notes);
    // Anthropic has no allowed_tools: the pool sent is the allowed subset.
    let tools: Vec<Value> = profiled(pool, Profile::Anthropic, notes)?
        .into_iter()
        .map(|(name, description, schema)| {
            json!({"name": name, "description": description, "input_schema": schema, "strict": true})
        })
        .collect();
    let mut choice = match input.choice {
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Auto
        | ToolChoice::AllowedTools {
            required: false, ..
        } => json!({"type": "auto"}),
        ToolChoice::Required | ToolChoice::AllowedTools { required: true, .. } => {
            json!({"type": "any"})
        }
        ToolChoice::Named(n) => json!({"type": "tool", "name": n}),
    };
    if *input.choice != ToolChoice::None {
        choice["disable_parallel_tool_use"] = json!(!input.parallel);
        body["tools"] = Value::Array(tools);
    }
    body["tool_choice"] = choice;
    Ok(body)
}
