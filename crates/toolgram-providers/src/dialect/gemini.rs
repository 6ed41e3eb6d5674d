//! Google Gemini `generateContent`, as generativelanguage.googleapis.com speaks it: the model
//! in the URL (never the body), `contents`/`systemInstruction`, function declarations through
//! the gemini profile with calling modes ANY/VALIDATED/NONE, `generationConfig`,
//! `candidates[0].content.parts` back, SSE chunks via `streamGenerateContent`. Shapes only:
//! the URL, key and header are the `gemini` row's in the registry.

use crate::dialect::reply::object_call;
use crate::dialect::request::{note_fallbacks, profiled, prompt_system};
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Body, Dialect, Kind, ReadError, RenderInput};
use crate::usage::count;
use serde_json::{Value, json};
use toolgram_core::define::message::parts_text;
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};

/// Gemini `generateContent`.
#[derive(Debug)]
pub(crate) struct GenerateContent;

impl Dialect for GenerateContent {
    fn profile(&self) -> Profile {
        Profile::Gemini
    }

    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value {
        json!({
            "systemInstruction": {"parts": [{"text": prompt_system(input, pool)}]},
            "contents": contents(input.messages),
        })
    }

    fn strict_tools(&self, input: &RenderInput, pool: &ToolSet, notes: &mut Vec<String>) -> Body {
        strict(input, pool, notes)
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        let mut cfg = serde_json::Map::new();
        if let Some(t) = input.temperature {
            cfg.insert("temperature".into(), json!(t));
        }
        if let Some(n) = input.max_tokens {
            cfg.insert("maxOutputTokens".into(), json!(n));
        }
        if !cfg.is_empty() {
            body["generationConfig"] = Value::Object(cfg);
        }
        let model = input.model.unwrap_or("gemini-2.5-flash");
        if input.stream {
            format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("/v1beta/models/{model}:generateContent")
        }
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        let parts = body
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
            .ok_or_else(|| ReadError::shape(kind, "no `candidates[0].content.parts`"))?;
        Ok(parts_text(parts, ""))
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        let parts = body
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array);
        Ok(parts
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, p)| {
                Some(object_call(
                    p.get("functionCall")?,
                    i,
                    ["id", "name", "args"],
                ))
            })
            .collect())
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        (
            count(body, "/usageMetadata/promptTokenCount"),
            count(body, "/usageMetadata/candidatesTokenCount"),
            count(body, "/usageMetadata/cachedContentTokenCount"),
        )
    }

    fn assemble(&self, _kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        let parts: Vec<Value> = chunks
            .iter()
            .filter_map(|c| {
                c.pointer("/candidates/0/content/parts")
                    .and_then(Value::as_array)
            })
            .flatten()
            .cloned()
            .collect();
        let text = parts_text(&parts, "");
        let mut merged: Vec<Value> = parts
            .into_iter()
            .filter(|p| p.get("text").is_none())
            .collect();
        if !text.is_empty() {
            merged.insert(0, json!({"text": text}));
        }
        Ok(json!({"candidates": [{"content": {"role": "model", "parts": merged}}]}))
    }
}

/// Gemini `contents` (system messages left out; tool results as `functionResponse` parts).
fn contents(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in messages {
        let text = m.content.clone().unwrap_or_default();
        match m.role.as_str() {
            "system" => {}
            "tool" => out.push(json!({"role": "user", "parts": [{"functionResponse": {
                "name": m.name.clone().unwrap_or_default(), "response": {"content": text}}}]})),
            "assistant" => {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"text": text}));
                }
                for c in m.tool_calls.iter().flatten() {
                    let args: Value =
                        serde_json::from_str(&c.function.arguments).unwrap_or_else(|_| json!({}));
                    parts.push(json!({"functionCall": {"name": c.function.name, "args": args}}));
                }
                out.push(json!({"role": "model", "parts": parts}));
            }
            _ => out.push(json!({"role": "user", "parts": [{"text": text}]})),
        }
    }
    out
}

/// `generateContent` with function declarations; strict = mode ANY / VALIDATED.
fn strict(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<Value, ProviderError> {
    let system: Vec<String> = input
        .messages
        .iter()
        .filter(|m| m.role == "system")
        .filter_map(|m| m.content.clone())
        .collect();
    let mut body = json!({"contents": contents(input.messages)});
    if !system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": system.join("\n\n")}]});
    }
    note_fallbacks(input.tools, false, notes);
    let declarations: Vec<Value> = profiled(input.tools, Profile::Gemini, notes)?
        .into_iter()
        .map(|(name, description, parameters)| {
            json!({"name": name, "description": description, "parameters": parameters})
        })
        .collect();
    let names: Vec<String> = pool.tools().iter().map(|t| t.name.clone()).collect();
    let mut config = match input.choice {
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Auto
        | ToolChoice::AllowedTools {
            required: false, ..
        } => json!({"mode": "VALIDATED"}),
        _ => json!({"mode": "ANY"}),
    };
    if matches!(
        input.choice,
        ToolChoice::Named(_) | ToolChoice::AllowedTools { .. }
    ) {
        config["allowedFunctionNames"] = json!(names);
    }
    if !input.parallel && *input.choice != ToolChoice::None {
        notes.push(
            "gemini has no parallel-calls switch: extra calls in a reply are refused by toolgram"
                .into(),
        );
    }
    body["tools"] = json!([{"functionDeclarations": declarations}]);
    body["toolConfig"] = json!({"functionCallingConfig": config});
    Ok(body)
}
