//! `openai-responses`: the OpenAI Responses API at api.openai.com, key from `OPENAI_API_KEY`
//! as a bearer token: `instructions` + `input` items, flat strict function tools (freeform
//! custom tools for GPT-5 models), `output` items back, the `response.completed` stream event.
//! OpenAI's `tool_choice` and Lark come from `dialect::openai_chat`; this file must not copy
//! them.

use crate::dialect::openai_chat as chat;
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::render::{common_fields, note_fallbacks, profiled, prompt_system, unsupported};
use crate::reply::{call, restored_calls, string_args};
use crate::spec::{
    Auth, Capabilities, ProviderInfo, ProviderSpec, ReadError, RenderInput, ReplyShape,
};
use crate::stream::bad;
use crate::usage::count;
use serde_json::{Value, json};
use toolgram_core::define::request::Path;
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};
use toolgram_retry::ModelReply;

const ENDPOINT: &str = "/v1/responses";

/// OpenAI Responses.
#[derive(Debug)]
pub(crate) struct OpenAiResponses;

/// Its row.
static INFO: ProviderInfo = ProviderInfo {
    name: "openai-responses",
    aliases: &[],
    default_base_url: "https://api.openai.com",
    api_key_env: Some("OPENAI_API_KEY"),
    auth: Auth::Bearer,
    capabilities: Capabilities {
        grammar: false,
        strict_json: true,
    },
};

impl ProviderSpec for OpenAiResponses {
    fn info(&self) -> &ProviderInfo {
        &INFO
    }

    fn request(
        &self,
        input: &RenderInput,
        pool: &ToolSet,
        notes: &mut Vec<String>,
    ) -> Result<(String, Value), ProviderError> {
        let mut body = match input.path {
            Path::Prompt => json!({
                "instructions": prompt_system(input, pool),
                "input": items(input.messages),
            }),
            Path::StrictJson => strict(input, pool, notes)?,
            path => return Err(unsupported(self, path)),
        };
        common_fields(input, &mut body, "max_output_tokens");
        Ok((ENDPOINT.to_owned(), body))
    }

    fn strict_calls(
        &self,
        text: String,
        body: &Value,
        tools: &ToolSet,
    ) -> Result<ModelReply, ReadError> {
        restored_calls(self, text, body, tools, Profile::OpenAiStrict)
    }

    fn replies(&self) -> &'static dyn ReplyShape {
        &OpenAiResponses
    }
}

impl ReplyShape for OpenAiResponses {
    fn reply_text(&self, _kind: &dyn ProviderSpec, body: &Value) -> Result<String, ReadError> {
        let items = body
            .get("output")
            .and_then(Value::as_array)
            .ok_or_else(|| ReadError::shape(self, "no `output` array"))?;
        Ok(items
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
            .map(|i| {
                i.get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("")
            })
            .collect::<Vec<_>>()
            .join(""))
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

    fn assemble(&self, chunks: &[Value]) -> Result<Value, ProviderError> {
        chunks
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some("response.completed"))
            .and_then(|c| c.get("response").cloned())
            .ok_or_else(|| bad(self, "the stream has no response.completed event"))
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

/// Strict function tools, flat.
fn strict(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<Value, ProviderError> {
    let mut body = json!({"input": items(input.messages)});
    if *input.choice == ToolChoice::None {
        return Ok(body);
    }
    let sent = chat::sent(input, pool);
    let native = chat::freeform_model(input.model);
    note_fallbacks(sent, native, notes);
    let mut tools = Vec::new();
    for (t, (name, description, parameters)) in
        sent.tools()
            .iter()
            .zip(profiled(sent, Profile::OpenAiStrict, notes)?)
    {
        tools.push(match (&t.grammar, native) {
            (Some(g), true) => json!({"type": "custom", "name": name, "description": description,
                "format": {"type": "grammar", "syntax": "lark", "definition": chat::openai_lark(&g.definition)?}}),
            _ => json!({"type": "function", "name": name, "description": description,
                "parameters": parameters, "strict": true}),
        });
    }
    body["tools"] = Value::Array(tools);
    body["tool_choice"] = match input.choice {
        ToolChoice::Named(n) => json!({"type": "function", "name": n}),
        ToolChoice::AllowedTools { tools, required } => json!({
            "type": "allowed_tools", "mode": if *required { "required" } else { "auto" },
            "tools": tools.iter().map(|n| json!({"type": "function", "name": n})).collect::<Vec<_>>(),
        }),
        other => chat::openai_choice(other),
    };
    body["parallel_tool_calls"] = json!(input.parallel);
    Ok(body)
}
