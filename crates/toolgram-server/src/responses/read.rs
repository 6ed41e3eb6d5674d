//! The Responses request as coding agents send it — `input` as a string or items (`message`
//! of any role incl. `developer`, `function_call`, `function_call_output`, `custom_tool_call`,
//! `custom_tool_call_output`, `reasoning`; items of hosted tools skipped with a note),
//! `instructions`, `previous_response_id` (the stored conversation), `namespace` tool groups,
//! hosted tools left out and listed, `reasoning` mapped to the model's reasoning block where
//! its template has one — read into a runtime [`Request`]. This module must not build replies
//! or run anything.

use super::encrypted::{ENCRYPTED_PREFIX, unhex};
use crate::app::{App, Served};
use crate::error::ApiError;
use crate::params::{self, Notes};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use toolgram_core::define::message::parts_text;
use toolgram_core::define::request::Think;
use toolgram_core::{ChatMessage, MessageToolCall};
use toolgram_runtime::Request;

/// A request read from the body.
pub struct ResponsesRequest<Q = Request> {
    /// The model it runs on.
    pub served: Served,
    /// The runtime request, then what its check made of it.
    pub req: Q,
    /// Stream the reply as typed events.
    pub stream: bool,
    /// Keep the response for `previous_response_id`.
    pub store: bool,
    /// Request fields the response object echoes.
    pub echo: Value,
    /// What was not done as asked.
    pub notes: Notes,
    /// The namespace of each tool that came in a `namespace` group.
    pub namespaces: HashMap<String, String>,
    /// Reasoning items carry `encrypted_content`.
    pub encrypted_reasoning: bool,
}

/// A Responses request, its runtime request checked.
pub type Checked = ResponsesRequest<toolgram_runtime::Ready>;

/// Fields read and honoured.
const HONOURED: &[&str] = &[
    "model",
    "input",
    "instructions",
    "previous_response_id",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "text",
    "max_output_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "max_attempts",
    "plan",
    "call_bias",
    "votes",
    "repeats",
    "strict_schemas",
    "stream",
    "store",
    "reasoning",
    "include",
    "prompt_cache_key",
];

/// Fields accepted that change nothing a single local model does (the session cache keys
/// on the prompt itself, so `prompt_cache_key` needs no more than the prompt).
const ACCEPTED: &[&str] = &[
    "metadata",
    "client_metadata",
    "user",
    "service_tier",
    "truncation",
    "safety_identifier",
    "stream_options",
    "background",
    "top_logprobs",
];

/// OpenAI's bounds on `metadata`: pairs, key characters, value characters.
pub const METADATA_LIMITS: (usize, usize, usize) = (16, 64, 512);

/// `metadata` within OpenAI's bounds (it is stored with the response): an object of at most
/// 16 string values, keys of at most 64 characters, values of at most 512; else a 400 naming
/// the bound.
fn check_metadata(metadata: Option<&Value>) -> Result<(), ApiError> {
    let (pairs, key_chars, value_chars) = METADATA_LIMITS;
    let o = match metadata {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(o)) => o,
        Some(_) => {
            return Err(ApiError::invalid(
                "metadata",
                "`metadata` must be an object of string values",
            ));
        }
    };
    if o.len() > pairs {
        return Err(ApiError::invalid(
            "metadata",
            format!(
                "`metadata` has {} pairs; at most {pairs} are allowed",
                o.len()
            ),
        ));
    }
    for (k, v) in o {
        let key = crate::clip::cut(k, key_chars * 4);
        if k.chars().count() > key_chars {
            return Err(ApiError::invalid(
                "metadata",
                format!("`metadata` key `{key}` is longer than {key_chars} characters"),
            ));
        }
        match v.as_str() {
            Some(s) if s.chars().count() <= value_chars => {}
            Some(_) => {
                return Err(ApiError::invalid(
                    "metadata",
                    format!("`metadata.{key}` is longer than {value_chars} characters"),
                ));
            }
            None => {
                return Err(ApiError::invalid(
                    "metadata",
                    format!("`metadata.{key}` must be a string"),
                ));
            }
        }
    }
    Ok(())
}

/// The reasoning text a `reasoning` input item carries back: our `encrypted_content`, else
/// its `content` or `summary` texts.
fn reasoning_text(item: &Value) -> Option<String> {
    if let Some(t) = item
        .get("encrypted_content")
        .and_then(Value::as_str)
        .and_then(|e| e.strip_prefix(ENCRYPTED_PREFIX))
        .and_then(unhex)
    {
        return Some(t);
    }
    let texts = |key: &str| {
        item.get(key)
            .and_then(Value::as_array)
            .map(|a| parts_text(a, "\n"))
            .filter(|t| !t.is_empty())
    };
    texts("content").or_else(|| texts("summary"))
}

fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(parts_text(parts, "")),
        _ => None,
    }
}

pub(super) fn call_message(call_id: &str, name: &str, arguments: String) -> MessageToolCall {
    MessageToolCall {
        id: call_id.to_owned(),
        kind: "function".to_owned(),
        function: toolgram_core::define::message::MessageFunction {
            name: name.to_owned(),
            arguments,
        },
    }
}

/// `input` items → chat messages (consecutive calls become one assistant message; a
/// `reasoning` item's text goes with the assistant turn after it); the tools of
/// `additional_tools` items (where a coding agent sends its tools) go to `tools`.
fn messages_of(
    input: &Value,
    tools: &mut Vec<Value>,
    notes: &mut Notes,
) -> Result<Vec<ChatMessage>, ApiError> {
    let items = match input {
        Value::String(s) => return Ok(vec![ChatMessage::text("user", s.clone())]),
        Value::Array(items) => items,
        _ => {
            return Err(ApiError::invalid(
                "input",
                "`input` must be a string or an array",
            ));
        }
    };
    let mut out: Vec<ChatMessage> = Vec::new();
    let mut reasoning: Option<String> = None;
    for (i, item) in items.iter().enumerate() {
        let at = format!("input[{i}]");
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        let s = |k: &str| item.get(k).and_then(Value::as_str);
        match kind {
            "message" => {
                let role = match s("role") {
                    Some("developer" | "system") => "system",
                    Some(r @ ("user" | "assistant")) => r,
                    _ => {
                        return Err(ApiError::invalid(
                            &at,
                            "a message needs role user, assistant, system or developer",
                        ));
                    }
                };
                let content = item
                    .get("content")
                    .and_then(text_of)
                    .ok_or_else(|| ApiError::invalid(&at, "a message needs `content`"))?;
                let mut m = ChatMessage::text(role, content);
                if role == "assistant" {
                    m.reasoning_content = reasoning.take();
                }
                out.push(m);
            }
            "function_call" | "custom_tool_call" => {
                let (Some(call_id), Some(name)) = (s("call_id"), s("name")) else {
                    return Err(ApiError::invalid(&at, "a call needs `call_id` and `name`"));
                };
                let arguments = if kind == "function_call" {
                    s("arguments").unwrap_or("{}").to_owned()
                } else {
                    json!({"input": s("input").unwrap_or("")}).to_string()
                };
                let call = call_message(call_id, name, arguments);
                match out.last_mut() {
                    Some(m) if m.role == "assistant" && m.tool_calls.is_some() => {
                        m.tool_calls.get_or_insert_with(Vec::new).push(call);
                    }
                    _ => out.push(ChatMessage {
                        role: "assistant".into(),
                        content: None,
                        tool_calls: Some(vec![call]),
                        tool_call_id: None,
                        name: None,
                        reasoning_content: reasoning.take(),
                    }),
                }
            }
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = s("call_id")
                    .ok_or_else(|| ApiError::invalid(&at, "an output needs `call_id`"))?;
                let output = item.get("output").and_then(text_of).unwrap_or_default();
                let mut m = ChatMessage::text("tool", output);
                m.tool_call_id = Some(call_id.to_owned());
                out.push(m);
            }
            "reasoning" => reasoning = reasoning_text(item),
            "additional_tools" => match item.get("tools") {
                Some(Value::Array(more)) => tools.extend(more.iter().cloned()),
                _ => return Err(ApiError::invalid(&at, "`additional_tools` needs `tools`")),
            },
            other => notes.push(format!(
                "{at}: item type `{other}` (a hosted tool's) is not run here and was left out"
            )),
        }
    }
    Ok(out)
}

/// Read a Responses body.
pub fn read(app: &App, served: Served, body: &Value) -> Result<ResponsesRequest, ApiError> {
    let o = params::object(body)?;
    let mut messages = match params::opt_str(o, "previous_response_id")? {
        Some(id) => {
            app.stored(id)
                .ok_or_else(|| {
                    ApiError::invalid("previous_response_id", format!("no stored response `{id}`"))
                })?
                .messages
        }
        None => Vec::new(),
    };
    let mut notes = params::ignored_fields(o, HONOURED, ACCEPTED);
    check_metadata(o.get("metadata"))?;
    let input = o
        .get("input")
        .ok_or_else(|| ApiError::invalid("input", "`input` is required"))?;
    let mut tools = match o.get("tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(ApiError::invalid("tools", "`tools` must be an array")),
    };
    messages.extend(messages_of(input, &mut tools, &mut notes)?);
    if let Some(instructions) = params::opt_str(o, "instructions")? {
        messages.retain(|m| m.role != "system");
        messages.insert(0, ChatMessage::text("system", instructions));
    }
    let pool = params::pool(
        &tools,
        app.config.hosted_tools,
        "tools",
        params::openai_tool,
    )?;
    let has_tools = !pool.tools.tools().is_empty();
    let mut req = Request::new(messages, pool.tools);
    req.not_offered = pool.not_offered;
    req.think = think(&served, o.get("reasoning"), &mut notes)?;
    req.tool_choice = params::tool_choice(o, has_tools)?;
    req.parallel_tool_calls = params::opt_bool(o, "parallel_tool_calls")?.unwrap_or(true);
    req.response_format =
        params::response_format(o.get("text").and_then(|t| t.get("format")), "text.format")?;
    req.sampling = params::sampling(
        o,
        &["max_output_tokens"],
        &app.config,
        served.max_tokens,
        &mut notes,
    )?;
    req.votes = params::votes(o, app.config.votes)?;
    let encrypted_reasoning = match o.get("include") {
        None | Some(Value::Null) => false,
        Some(Value::Array(a)) => a
            .iter()
            .any(|v| v.as_str() == Some("reasoning.encrypted_content")),
        Some(_) => return Err(ApiError::invalid("include", "`include` must be an array")),
    };
    req.retry = params::retry(o)?;
    req.repeats = params::repeats(o, app.config.repeats)?;
    req.strict_schemas = params::strict_schemas(o, app.config.strict_schemas)?;
    let echo: Map<String, Value> = [
        "instructions",
        "previous_response_id",
        "tool_choice",
        "tools",
        "parallel_tool_calls",
        "temperature",
        "top_p",
        "max_output_tokens",
        "text",
        "metadata",
        "reasoning",
    ]
    .iter()
    .map(|k| ((*k).to_owned(), o.get(*k).cloned().unwrap_or(Value::Null)))
    .collect();
    app.log_notes("/v1/responses", &notes);
    Ok(ResponsesRequest {
        served,
        req,
        stream: params::opt_bool(o, "stream")?.unwrap_or(false),
        store: params::opt_bool(o, "store")?.unwrap_or(true),
        echo: Value::Object(echo),
        notes,
        namespaces: pool.namespaces,
        encrypted_reasoning,
    })
}

/// `reasoning: {effort}` as the model's reasoning block: demanded where the model's template
/// writes one (as OpenAI's reasoning models always reason; off for effort `none` or
/// `minimal`), else ignored with a note.
fn think(served: &Served, reasoning: Option<&Value>, notes: &mut Notes) -> Result<Think, ApiError> {
    let Some(r) = reasoning.filter(|r| !r.is_null()) else {
        return Ok(Think::Off);
    };
    let effort = match r.get("effort") {
        None | Some(Value::Null) => "medium",
        Some(Value::String(e)) => e.as_str(),
        Some(_) => {
            return Err(ApiError::invalid(
                "reasoning.effort",
                "`reasoning.effort` must be a string",
            ));
        }
    };
    if matches!(effort, "none" | "minimal") {
        return Ok(Think::Off);
    }
    if served.runtime.reasons() {
        Ok(Think::Required)
    } else {
        notes.push(
            "`reasoning` was ignored: the model's chat template has no reasoning block".into(),
        );
        Ok(Think::Off)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::responses::encrypted::hex;

    /// The reasoning text rides in `encrypted_content` and comes back whole, any text.
    #[test]
    fn encrypted_reasoning_round_trips() {
        for text in ["", "plain", "ünïcödé\nlines\t\"quotes\" <think>"] {
            let item = json!({"type": "reasoning",
                "encrypted_content": format!("{ENCRYPTED_PREFIX}{}", hex(text))});
            assert_eq!(reasoning_text(&item).as_deref(), Some(text));
        }
        // Another server's opaque blob is not read; the item's own text is.
        let foreign = json!({"type": "reasoning", "encrypted_content": "gAAAA…",
            "summary": [{"type": "summary_text", "text": "thought"}]});
        assert_eq!(reasoning_text(&foreign).as_deref(), Some("thought"));
        assert_eq!(unhex("zz"), None);
    }
}
