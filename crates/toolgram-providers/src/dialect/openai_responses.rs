//! The OpenAI Responses API, as api.openai.com speaks it: `instructions` + `input` items, flat
//! strict function tools (freeform custom tools for the models that take them), `output`
//! items back, the `response.completed` stream event. OpenAI's `tool_choice` and Lark come
//! from `dialect::openai_chat`; this file must not copy them. Shapes only: the URL and key
//! are the `openai-responses` row's in the registry.

use crate::dialect::openai_chat as chat;
use crate::dialect::reply::{call, string_args};
use crate::dialect::request::{common_fields, prompt_system};
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Body, Dialect, Kind, ReadError, RenderInput};
use crate::stream::bad;
use crate::usage::count;
use serde_json::{Value, json};
use toolgram_core::define::message::parts_text;
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};

/// OpenAI Responses.
#[derive(Debug)]
pub(crate) struct Responses;

impl Dialect for Responses {
    fn profile(&self) -> Profile {
        Profile::OpenAiStrict
    }

    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value {
        json!({
            "instructions": prompt_system(input, pool),
            "input": items(input.messages),
        })
    }

    fn strict_tools(&self, input: &RenderInput, pool: &ToolSet, notes: &mut Vec<String>) -> Body {
        let mut body = json!({"input": items(input.messages)});
        let freeform = chat::freeform_model(input.model);
        if let Some(tools) = chat::openai_tools(input, pool, freeform, notes, &FLAT_TOOLS)? {
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = choice(input.choice);
            body["parallel_tool_calls"] = json!(input.parallel);
        }
        Ok(body)
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        common_fields(input, body, "max_output_tokens");
        "/v1/responses".to_owned()
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        let items = body
            .get("output")
            .and_then(Value::as_array)
            .ok_or_else(|| ReadError::shape(kind, "no `output` array"))?;
        Ok(items
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
            .filter_map(|i| i.get("content").and_then(Value::as_array))
            .map(|parts| parts_text(parts, ""))
            .collect())
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        let mut calls = Vec::new();
        let items = body.get("output").and_then(Value::as_array);
        for (i, it) in items.into_iter().flatten().enumerate() {
            if it.get("type").and_then(Value::as_str) == Some("custom_tool_call") {
                let id = it.get("call_id").and_then(Value::as_str).unwrap_or("");
                let name = it.get("name").and_then(Value::as_str).unwrap_or("");
                let text = it.get("input").cloned().unwrap_or(Value::Null);
                calls.push(call(id, i, name, json!({ "input": text })));
            }
            if it.get("type").and_then(Value::as_str) == Some("function_call") {
                let id = it.get("call_id").and_then(Value::as_str).unwrap_or("");
                let name = it.get("name").and_then(Value::as_str).unwrap_or("");
                let args = string_args(it.get("arguments").unwrap_or(&Value::Null))
                    .map_err(|m| ReadError::body(body, m))?;
                calls.push(call(id, i, name, args));
            }
        }
        Ok(calls)
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        (
            count(body, "/usage/input_tokens"),
            count(body, "/usage/output_tokens"),
            count(body, "/usage/input_tokens_details/cached_tokens"),
        )
    }

    fn assemble(&self, kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        chunks
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some("response.completed"))
            .and_then(|c| c.get("response").cloned())
            .ok_or_else(|| bad(kind, "the stream has no response.completed event"))
    }
}

/// The conversation as `input` items (tool results as `function_call_output`, earlier calls
/// as `function_call`).
fn items(messages: &[ChatMessage]) -> Value {
    let mut items = Vec::new();
    for m in messages {
        match m.role.as_str() {
            "tool" => items.push(json!({"type": "function_call_output",
                "call_id": m.tool_call_id.clone().unwrap_or_default(),
                "output": m.content.clone().unwrap_or_default()})),
            _ => {
                if let Some(text) = m.content.as_deref().filter(|t| !t.is_empty()) {
                    items.push(json!({"role": m.role, "content": text}));
                }
                for c in m.tool_calls.iter().flatten() {
                    items.push(json!({"type": "function_call", "call_id": c.id,
                        "name": c.function.name, "arguments": c.function.arguments}));
                }
            }
        }
    }
    Value::Array(items)
}

/// The Responses API's tools: flat.
const FLAT_TOOLS: chat::ToolShape = chat::ToolShape {
    function: |name, description, parameters| {
        json!({"type": "function", "name": name, "description": description,
            "parameters": parameters, "strict": true})
    },
    custom: |name, description, lark| {
        json!({"type": "custom", "name": name, "description": description,
            "format": {"type": "grammar", "syntax": "lark", "definition": lark}})
    },
};

/// The Responses API's `tool_choice`: OpenAI's, with a named or allowed function flat.
fn choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Named(n) => json!({"type": "function", "name": n}),
        ToolChoice::AllowedTools { tools, required } => json!({
            "type": "allowed_tools", "mode": if *required { "required" } else { "auto" },
            "tools": tools.iter().map(|n| json!({"type": "function", "name": n})).collect::<Vec<_>>(),
        }),
        other => chat::openai_choice(other),
    }
}
