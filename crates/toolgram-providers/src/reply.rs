//! Provider replies read into toolgram's one reply type ([`ModelReply`]): native tool calls
//! from each documented response shape; text written under our grammar by core's strict
//! parser; strict-JSON call objects; prompt-path text by core's lenient parser. Reading
//! only: validation is the retry loop's.

use crate::capability::Kind;
use crate::error::ProviderError;
use crate::profile::{Profile, restore_arguments};
use serde_json::Value;
use toolgram_core::define::request::Path;
use toolgram_core::parse::lenient::{LenientOptions, SyntaxChoice};
use toolgram_core::parse::parse_output;
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ToolCall, ToolChoice, ToolSet};
use toolgram_retry::ModelReply;

/// Why a reply could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The model's text is not a readable call: worth telling the model.
    Unreadable {
        /// What it wrote.
        raw: String,
        /// What was wrong.
        message: String,
    },
    /// The provider's envelope is not its documented shape.
    Shape(ProviderError),
}

fn shape(kind: Kind, message: impl Into<String>) -> ReadError {
    ReadError::Shape(ProviderError::Reply {
        provider: kind.name().to_owned(),
        message: message.into(),
    })
}

fn call(id: &str, i: usize, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: if id.is_empty() {
            format!("call_{i}")
        } else {
            id.to_owned()
        },
        name: name.to_owned(),
        arguments,
    }
}

/// Arguments sent as a JSON string (OpenAI) parsed; a string that is not JSON is unreadable.
fn string_args(raw: &Value) -> Result<Value, String> {
    match raw {
        Value::String(s) => {
            serde_json::from_str(s).map_err(|e| format!("arguments are not JSON: {e}"))
        }
        other => Ok(other.clone()),
    }
}

/// Read a reply body for the path the request took.
pub fn read_reply(
    kind: Kind,
    path: Path,
    body: &Value,
    tools: &ToolSet,
    choice: &ToolChoice,
    syntax: &'static CallSyntax,
) -> Result<ModelReply, ReadError> {
    let text = reply_text(kind, body)?;
    match path {
        Path::Grammar => {
            let out =
                parse_output(&text, syntax, tools, choice).map_err(|e| ReadError::Unreadable {
                    raw: text.clone(),
                    message: e.to_string(),
                })?;
            Ok(ModelReply {
                content: out.content,
                tool_calls: out.tool_calls,
                raw: text,
                ..ModelReply::default()
            })
        }
        Path::Prompt => lenient(&text, tools, syntax, native_calls(kind, body)?),
        Path::Json => Err(ReadError::Shape(ProviderError::Unsupported(format!(
            "json is the embedded engine's path; {} replies on strict_json",
            kind.name()
        )))),
        Path::StrictJson => match kind {
            Kind::LlamaServer | Kind::Ollama => json_object_calls(&text, tools),
            _ => {
                let calls = native_calls(kind, body)?;
                let profile = match kind {
                    Kind::Anthropic => Profile::Anthropic,
                    Kind::Gemini => Profile::Gemini,
                    _ => Profile::OpenAiStrict,
                };
                let calls = calls
                    .into_iter()
                    .map(|c| {
                        let restored = tools.get(&c.name).map_or(c.arguments.clone(), |t| {
                            restore_arguments(profile, &t.parameters, c.arguments.clone())
                        });
                        ToolCall {
                            arguments: restored,
                            ..c
                        }
                    })
                    .collect();
                Ok(ModelReply {
                    content: Some(text.clone()).filter(|t| !t.trim().is_empty()),
                    tool_calls: calls,
                    raw: text,
                    ..ModelReply::default()
                })
            }
        },
    }
}

/// The assistant's text in the reply.
fn reply_text(kind: Kind, body: &Value) -> Result<String, ReadError> {
    let joined = |parts: Option<&Vec<Value>>, key: &str| {
        parts
            .into_iter()
            .flatten()
            .filter_map(|p| p.get(key).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("")
    };
    Ok(match kind {
        Kind::Anthropic => {
            let blocks = body
                .get("content")
                .and_then(Value::as_array)
                .ok_or_else(|| shape(kind, "no `content` array"))?;
            joined(Some(blocks), "text")
        }
        Kind::Gemini => {
            let parts = body
                .pointer("/candidates/0/content/parts")
                .and_then(Value::as_array)
                .ok_or_else(|| shape(kind, "no `candidates[0].content.parts`"))?;
            joined(Some(parts), "text")
        }
        Kind::Ollama => body
            .pointer("/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| shape(kind, "no `message.content`"))?
            .to_owned(),
        Kind::OpenAiResponses => {
            let items = body
                .get("output")
                .and_then(Value::as_array)
                .ok_or_else(|| shape(kind, "no `output` array"))?;
            items
                .iter()
                .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
                .map(|i| joined(i.get("content").and_then(Value::as_array), "text"))
                .collect::<Vec<_>>()
                .join("")
        }
        _ => {
            let msg = body
                .pointer("/choices/0/message")
                .ok_or_else(|| shape(kind, "no `choices[0].message`"))?;
            msg.get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        }
    })
}

/// Native tool calls in the reply (empty when the provider returned text only).
fn native_calls(kind: Kind, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
    let bad = |m: String| ReadError::Unreadable {
        raw: body.to_string(),
        message: m,
    };
    let mut calls = Vec::new();
    match kind {
        Kind::Anthropic => {
            for (i, b) in body
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                if b.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let id = b.get("id").and_then(Value::as_str).unwrap_or("");
                    let name = b.get("name").and_then(Value::as_str).unwrap_or("");
                    calls.push(call(
                        id,
                        i,
                        name,
                        b.get("input").cloned().unwrap_or(Value::Null),
                    ));
                }
            }
        }
        Kind::Gemini => {
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
        }
        Kind::OpenAiResponses => {
            let items = body.get("output").and_then(Value::as_array);
            for (i, it) in items.into_iter().flatten().enumerate() {
                if it.get("type").and_then(Value::as_str) == Some("custom_tool_call") {
                    let id = it.get("call_id").and_then(Value::as_str).unwrap_or("");
                    let name = it.get("name").and_then(Value::as_str).unwrap_or("");
                    let text = it.get("input").cloned().unwrap_or(Value::Null);
                    calls.push(call(id, i, name, serde_json::json!({ "input": text })));
                }
                if it.get("type").and_then(Value::as_str) == Some("function_call") {
                    let id = it.get("call_id").and_then(Value::as_str).unwrap_or("");
                    let name = it.get("name").and_then(Value::as_str).unwrap_or("");
                    let args =
                        string_args(it.get("arguments").unwrap_or(&Value::Null)).map_err(bad)?;
                    calls.push(call(id, i, name, args));
                }
            }
        }
        _ => {
            let list = match kind {
                Kind::Ollama => body.pointer("/message/tool_calls"),
                _ => body.pointer("/choices/0/message/tool_calls"),
            };
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
                    calls.push(call(id, i, name, serde_json::json!({ "input": text })));
                    continue;
                }
                let name = c
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let args = string_args(c.pointer("/function/arguments").unwrap_or(&Value::Null))
                    .map_err(bad)?;
                calls.push(call(id, i, name, args));
            }
        }
    }
    Ok(calls)
}

/// Prompt path: native calls if the provider produced any, else the lenient parser.
fn lenient(
    text: &str,
    tools: &ToolSet,
    syntax: &'static CallSyntax,
    native: Vec<ToolCall>,
) -> Result<ModelReply, ReadError> {
    if !native.is_empty() {
        return Ok(ModelReply {
            content: Some(text.to_owned()).filter(|t| !t.trim().is_empty()),
            tool_calls: native,
            raw: text.to_owned(),
            ..ModelReply::default()
        });
    }
    let opts = LenientOptions {
        syntax: SyntaxChoice::Named(syntax),
        tools: Some(tools.tools()),
        ..LenientOptions::default()
    };
    let out =
        toolgram_core::parse::lenient::parse(text, &opts).map_err(|e| ReadError::Unreadable {
            raw: text.to_owned(),
            message: e.to_string(),
        })?;
    Ok(ModelReply {
        content: Some(out.content).filter(|c| !c.is_empty()),
        reasoning_content: Some(out.reasoning_content).filter(|c| !c.is_empty()),
        tool_calls: out
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| call(&c.id, i, &c.name, c.arguments))
            .collect(),
        raw: text.to_owned(),
        usage: None,
    })
}

/// Strict JSON via a response schema: `{"call": {...}}` or `{"calls": [...]}`.
fn json_object_calls(text: &str, tools: &ToolSet) -> Result<ModelReply, ReadError> {
    let unreadable = |m: String| ReadError::Unreadable {
        raw: text.to_owned(),
        message: m,
    };
    let v: Value = serde_json::from_str(text).map_err(|e| unreadable(format!("not JSON: {e}")))?;
    let list: Vec<&Value> = match (v.get("call"), v.get("calls").and_then(Value::as_array)) {
        (Some(c), _) => vec![c],
        (None, Some(cs)) => cs.iter().collect(),
        _ => {
            return Err(unreadable(
                "expected {\"call\": …} or {\"calls\": […]}".into(),
            ));
        }
    };
    let calls = list
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            let args = c.get("arguments").cloned().unwrap_or(Value::Null);
            let args = tools.get(name).map_or(args.clone(), |t| {
                restore_arguments(Profile::OpenAiStrict, &t.parameters, args)
            });
            call("", i, name, args)
        })
        .collect();
    Ok(ModelReply {
        tool_calls: calls,
        raw: text.to_owned(),
        ..ModelReply::default()
    })
}
