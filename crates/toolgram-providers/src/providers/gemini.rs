//! `gemini`: Google Gemini `generateContent` at generativelanguage.googleapis.com, key from
//! `GEMINI_API_KEY` in `x-goog-api-key`: the model in the URL (never the body),
//! `contents`/`systemInstruction`, function declarations through the gemini profile with
//! calling modes ANY/VALIDATED/NONE, `generationConfig`, `candidates[0].content.parts` back,
//! SSE chunks via `streamGenerateContent`. Everything Gemini-specific is here; it must not
//! reach into another provider's file.

use crate::error::ProviderError;
use crate::profile::Profile;
use crate::render::{note_fallbacks, profiled, prompt_system, unsupported};
use crate::reply::{call, restored_calls};
use crate::spec::{
    Auth, Capabilities, ProviderInfo, ProviderSpec, ReadError, RenderInput, ReplyShape,
};
use crate::usage::count;
use serde_json::{Value, json};
use toolgram_core::define::request::Path;
use toolgram_core::{ChatMessage, ToolCall, ToolChoice, ToolSet};
use toolgram_retry::ModelReply;

/// Google Gemini.
#[derive(Debug)]
pub(crate) struct Gemini;

/// Its row.
static INFO: ProviderInfo = ProviderInfo {
    name: "gemini",
    aliases: &[],
    default_base_url: "https://generativelanguage.googleapis.com",
    api_key_env: Some("GEMINI_API_KEY"),
    auth: Auth::Header {
        name: "x-goog-api-key",
        extra: &[],
    },
    capabilities: Capabilities {
        grammar: false,
        strict_json: true,
    },
};

impl ProviderSpec for Gemini {
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
                "systemInstruction": {"parts": [{"text": prompt_system(input, pool)}]},
                "contents": contents(input.messages),
            }),
            Path::StrictJson => strict(input, pool, notes)?,
            path => return Err(unsupported(self, path)),
        };
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
        let endpoint = if input.stream {
            format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("/v1beta/models/{model}:generateContent")
        };
        Ok((endpoint, body))
    }

    fn strict_calls(
        &self,
        text: String,
        body: &Value,
        tools: &ToolSet,
    ) -> Result<ModelReply, ReadError> {
        restored_calls(self, text, body, tools, Profile::Gemini)
    }

    fn replies(&self) -> &'static dyn ReplyShape {
        &Gemini
    }
}

impl ReplyShape for Gemini {
    fn reply_text(&self, _kind: &dyn ProviderSpec, body: &Value) -> Result<String, ReadError> {
        let parts = body
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
            .ok_or_else(|| ReadError::shape(self, "no `candidates[0].content.parts`"))?;
        Ok(parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""))
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        let mut calls = Vec::new();
        let parts = body
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array);
        for (i, p) in parts.into_iter().flatten().enumerate() {
            if let Some(fc) = p.get("functionCall") {
                let name = fc.get("name").and_then(Value::as_str).unwrap_or("");
                let id = fc.get("id").and_then(Value::as_str).unwrap_or("");
                calls.push(call(
                    id,
                    i,
                    name,
                    fc.get("args").cloned().unwrap_or(Value::Null),
                ));
            }
        }
        Ok(calls)
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        (
            count(body, "/usageMetadata/promptTokenCount"),
            count(body, "/usageMetadata/candidatesTokenCount"),
            count(body, "/usageMetadata/cachedContentTokenCount"),
        )
    }

    fn assemble(&self, chunks: &[Value]) -> Result<Value, ProviderError> {
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
