//! Google Gemini's `generateContent`, as its clients send and read it: `contents` and
//! `systemInstruction` (tool results as `functionResponse` parts, an assistant turn as the
//! `model` role's text and `functionCall` parts), function declarations and the
//! `functionCallingConfig` modes (`NONE`, `VALIDATED`, `ANY`, with `allowedFunctionNames`),
//! `generationConfig`, a reply's `candidates[0].content.parts` (text, calls, usage), and SSE
//! chunks joined back into a reply. This module must not touch HTTP or name a model.

use crate::read::{call, count};
use serde_json::{Map, Value, json};
use toolgram_core::define::message::parts_text;
use toolgram_core::{ChatMessage, ToolCall, ToolChoice};

/// Chat messages as Gemini `contents` (system messages left out: see [`system_instruction`]).
pub fn contents(messages: &[ChatMessage]) -> Vec<Value> {
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

/// A `systemInstruction` of one text part.
pub fn system_instruction(text: &str) -> Value {
    json!({"parts": [{"text": text}]})
}

/// A function declaration.
pub fn declaration(name: String, description: String, parameters: Value) -> Value {
    json!({"name": name, "description": description, "parameters": parameters})
}

/// The `functionCallingConfig` for a choice: `NONE`, `VALIDATED` (auto), `ANY` (a call
/// required), with `allowedFunctionNames` — `names` — for a named tool or an allowed list.
pub fn calling_config(choice: &ToolChoice, names: Vec<String>) -> Value {
    let mut config = match choice {
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Auto
        | ToolChoice::AllowedTools {
            required: false, ..
        } => json!({"mode": "VALIDATED"}),
        _ => json!({"mode": "ANY"}),
    };
    if matches!(
        choice,
        ToolChoice::Named(_) | ToolChoice::AllowedTools { .. }
    ) {
        config["allowedFunctionNames"] = json!(names);
    }
    config
}

/// The `generationConfig` for a temperature and a token limit; `None` when neither is set.
pub fn generation_config(temperature: Option<f32>, max_tokens: Option<usize>) -> Option<Value> {
    let mut cfg = Map::new();
    if let Some(t) = temperature {
        cfg.insert("temperature".into(), json!(t));
    }
    if let Some(n) = max_tokens {
        cfg.insert("maxOutputTokens".into(), json!(n));
    }
    (!cfg.is_empty()).then_some(Value::Object(cfg))
}

/// A reply's parts.
fn parts(body: &Value) -> Option<&Vec<Value>> {
    body.pointer("/candidates/0/content/parts")
        .and_then(Value::as_array)
}

/// A reply's text; `None` when it has no `candidates[0].content.parts`.
pub fn read_text(body: &Value) -> Option<String> {
    parts(body).map(|p| parts_text(p, ""))
}

/// A reply's `functionCall` parts as calls (`call_{i}` for the `i`th part without an id).
pub fn read_calls(body: &Value) -> Vec<ToolCall> {
    parts(body)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, p)| {
            let f = p.get("functionCall")?;
            let field = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("");
            let args = f.get("args").cloned().unwrap_or(Value::Null);
            Some(call(field("id"), i, field("name"), args))
        })
        .collect()
}

/// A reply's usage: prompt, generated and cached tokens (`usageMetadata`).
pub fn read_usage(body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
    (
        count(body, "/usageMetadata/promptTokenCount"),
        count(body, "/usageMetadata/candidatesTokenCount"),
        count(body, "/usageMetadata/cachedContentTokenCount"),
    )
}

/// A stream's chunks joined into one reply: the text parts as one, first, then the others.
pub fn assemble(chunks: &[Value]) -> Value {
    let all: Vec<Value> = chunks.iter().filter_map(parts).flatten().cloned().collect();
    let text = parts_text(&all, "");
    let mut merged: Vec<Value> = all
        .into_iter()
        .filter(|p| p.get("text").is_none())
        .collect();
    if !text.is_empty() {
        merged.insert(0, json!({"text": text}));
    }
    json!({"candidates": [{"content": {"role": "model", "parts": merged}}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks joined read as one reply: the text whole, the call with its arguments.
    #[test]
    fn a_stream_assembled_reads_as_a_reply() {
        let chunk = |part: Value| json!({"candidates": [{"content": {"parts": [part]}}]});
        let chunks = [
            chunk(json!({"text": "Look"})),
            chunk(json!({"text": "ing."})),
            chunk(json!({"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}})),
        ];
        let body = assemble(&chunks);
        assert_eq!(read_text(&body).as_deref(), Some("Looking."));
        let calls = read_calls(&body);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("call_1", "get_weather")
        );
        assert_eq!(calls[0].arguments, json!({"city": "Paris"}));
    }

    #[test]
    fn a_named_choice_allows_only_its_function() {
        let c = calling_config(&ToolChoice::Named("f".into()), vec!["f".into()]);
        assert_eq!(c, json!({"mode": "ANY", "allowedFunctionNames": ["f"]}));
        assert_eq!(
            calling_config(&ToolChoice::Auto, vec![]),
            json!({"mode": "VALIDATED"})
        );
    }
}
