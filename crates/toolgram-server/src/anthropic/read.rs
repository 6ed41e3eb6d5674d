//! Reading an Anthropic Messages body into a runtime [`Request`]: `system` (a string or text
//! blocks; `system` messages among the others join it), messages of content blocks (`text`, `tool_use`, `tool_result` with `is_error`,
//! `thinking` as the turn's reasoning; `redacted_thinking`, images and server-tool blocks
//! left out with a note), `tools` with `input_schema` (Anthropic's server tools left out and
//! listed), `tool_choice` with `disable_parallel_tool_use`, `max_tokens`, `temperature`,
//! `top_p`, `stop_sequences`, `thinking`, structured output (`output_config.format` or
//! `output_format`, beside the tools or alone). Fields the server does not use are accepted and
//! named in the reply's notes. This module must not run anything or write replies.

use crate::app::{App, Served};
use crate::error::ApiError;
use crate::params::{self, Notes};
use serde_json::{Map, Value, json};
use toolgram_core::define::message::{MessageFunction, parts_text};
use toolgram_core::define::read_tools::read_function;
use toolgram_core::define::request::Think;
use toolgram_core::{ChatMessage, DefinitionError, MessageToolCall, Tool, ToolChoice};
use toolgram_runtime::{Request, ResponseFormat};

/// A Messages request as read.
pub struct MessagesRequest<Q = Request> {
    /// The model it runs on.
    pub served: Served,
    /// The runtime request, then what its check made of it.
    pub req: Q,
    /// Stream the reply as SSE.
    pub stream: bool,
    /// What was not done as asked.
    pub notes: Notes,
}

/// Fields read and honoured.
const HONOURED: &[&str] = &[
    "model",
    "messages",
    "system",
    "max_tokens",
    "temperature",
    "top_p",
    "stop_sequences",
    "stream",
    "tools",
    "tool_choice",
    "thinking",
    "output_format",
    "max_attempts",
    "plan",
    "call_bias",
    "votes",
    "repeats",
    "strict_schemas",
];

/// Fields accepted that change nothing a single local model does.
const ACCEPTED: &[&str] = &[
    "metadata",
    "service_tier",
    "context_management",
    "container",
    "output_config",
    "inference_geo",
    "cache_control",
    "speed",
    "diagnostics",
];

/// The text of `system`: a string, or text blocks joined by blank lines.
fn system_text(v: &Value) -> Result<String, ApiError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Array(blocks) => Ok(parts_text(blocks, "\n\n")),
        _ => Err(ApiError::invalid(
            "system",
            "`system` must be a string or an array of text blocks",
        )),
    }
}

/// A `tool_result`'s content as text: a string, or its text blocks joined.
fn result_text(block: &Value, notes: &mut Notes, at: &str) -> String {
    let text = match block.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            if parts
                .iter()
                .any(|p| p.get("type").and_then(Value::as_str) != Some("text"))
            {
                notes.push(format!(
                    "{at}: only the text of a tool result is given to the model"
                ));
            }
            parts_text(parts, "\n")
        }
        _ => String::new(),
    };
    if block.get("is_error").and_then(Value::as_bool) == Some(true) {
        format!("Error: {text}")
    } else {
        text
    }
}

/// One Anthropic message → chat messages: a user turn's tool results become `tool` messages
/// (before its text), an assistant turn's blocks one assistant message.
fn messages_of(
    i: usize,
    m: &Value,
    out: &mut Vec<ChatMessage>,
    notes: &mut Notes,
) -> Result<(), ApiError> {
    let at = format!("messages[{i}]");
    let role = match m.get("role").and_then(Value::as_str) {
        Some(r @ ("user" | "assistant")) => r,
        Some("system") => {
            // Claude Code sends its environment as a system message among the others; chat
            // templates want one system prompt, first: it joins that.
            let text = system_text(m.get("content").unwrap_or(&Value::Null))
                .map_err(|_| ApiError::invalid(&at, "a system message needs text content"))?;
            match out.first_mut() {
                Some(first) if first.role == "system" => {
                    let joined = format!("{}\n\n{text}", first.content.as_deref().unwrap_or(""));
                    first.content = Some(joined);
                }
                _ => out.insert(0, ChatMessage::text("system", text)),
            }
            return Ok(());
        }
        _ => {
            return Err(ApiError::invalid(
                &at,
                "a message's role must be user, assistant or system",
            ));
        }
    };
    let blocks = match m.get("content") {
        Some(Value::String(s)) => {
            out.push(ChatMessage::text(role, s.clone()));
            return Ok(());
        }
        Some(Value::Array(blocks)) => blocks,
        _ => {
            return Err(ApiError::invalid(
                &format!("{at}.content"),
                "`content` must be a string or an array of blocks",
            ));
        }
    };
    let mut text = Vec::new();
    let mut calls = Vec::new();
    let mut reasoning = Vec::new();
    for (j, b) in blocks.iter().enumerate() {
        let at = format!("{at}.content[{j}]");
        let s = |k: &str| b.get(k).and_then(Value::as_str);
        match b.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => text.push(s("text").unwrap_or("").to_owned()),
            "thinking" if role == "assistant" => {
                reasoning.push(s("thinking").unwrap_or("").to_owned());
            }
            "tool_use" if role == "assistant" => {
                let (Some(id), Some(name)) = (s("id"), s("name")) else {
                    return Err(ApiError::invalid(
                        &at,
                        "a tool_use block needs `id` and `name`",
                    ));
                };
                let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                calls.push(MessageToolCall {
                    id: id.to_owned(),
                    kind: "function".to_owned(),
                    function: MessageFunction {
                        name: name.to_owned(),
                        arguments: input.to_string(),
                    },
                });
            }
            "tool_result" if role == "user" => {
                let id = s("tool_use_id").ok_or_else(|| {
                    ApiError::invalid(&at, "a tool_result block needs `tool_use_id`")
                })?;
                let mut t = ChatMessage::text("tool", result_text(b, notes, &at));
                t.tool_call_id = Some(id.to_owned());
                out.push(t);
            }
            other => notes.push(format!(
                "{at}: a `{other}` block is not given to this model and was left out"
            )),
        }
    }
    if role == "user" {
        if !text.is_empty() {
            out.push(ChatMessage::text("user", text.join("\n")));
        }
        return Ok(());
    }
    out.push(ChatMessage {
        role: "assistant".into(),
        content: (!text.is_empty()).then(|| text.join("\n")),
        tool_calls: (!calls.is_empty()).then_some(calls),
        tool_call_id: None,
        name: None,
        reasoning_content: (!reasoning.is_empty()).then(|| reasoning.join("\n")),
    });
    Ok(())
}

/// A Messages API tool read straight into a [`Tool`]: a client tool (`type` absent or
/// `custom`) is a function with its `input_schema`; other types are read as OpenAI's shapes
/// (a client that sends them), else they are hosted tools (`web_search_…`, `bash_…`).
fn anthropic_tool(t: &Value, at: &str) -> Option<Result<Tool, DefinitionError>> {
    let obj = t.as_object()?;
    match obj.get("type").and_then(Value::as_str) {
        None | Some("custom") => Some(read_function(
            obj,
            at,
            "input_schema",
            json!({"type": "object"}),
        )),
        Some(_) => params::openai_tool(t, at),
    }
}

/// `tool_choice` and whether several calls may be made.
fn tool_choice(o: &Map<String, Value>, has_tools: bool) -> Result<(ToolChoice, bool), ApiError> {
    let Some(v) = o.get("tool_choice").filter(|v| !v.is_null()) else {
        let choice = if has_tools {
            ToolChoice::Auto
        } else {
            ToolChoice::None
        };
        return Ok((choice, true));
    };
    let parallel = !v
        .get("disable_parallel_tool_use")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let choice = match v.get("type").and_then(Value::as_str) {
        Some("auto") if has_tools => ToolChoice::Auto,
        Some("auto" | "none") => ToolChoice::None,
        Some("any") => ToolChoice::Required,
        Some("tool") => {
            let name = v.get("name").and_then(Value::as_str).ok_or_else(|| {
                ApiError::invalid("tool_choice", "a `tool` tool_choice needs `name`")
            })?;
            ToolChoice::Named(name.to_owned())
        }
        _ => {
            return Err(ApiError::invalid(
                "tool_choice",
                "`tool_choice.type` must be auto, any, tool or none",
            ));
        }
    };
    Ok((choice, parallel))
}

/// `thinking` as the model's reasoning block, with its token budget: `enabled` demands the
/// block (as Anthropic's models always write one), `adaptive` allows it; a note where the
/// model's template has none.
fn think(served: &Served, o: &Map<String, Value>, notes: &mut Notes) -> (Think, Option<usize>) {
    let Some(t) = o.get("thinking").filter(|t| !t.is_null()) else {
        return (Think::Off, None);
    };
    match t.get("type").and_then(Value::as_str) {
        Some(kind @ ("enabled" | "adaptive")) if served.runtime.reasons() => {
            let budget = t
                .get("budget_tokens")
                .and_then(Value::as_u64)
                .and_then(|b| usize::try_from(b).ok());
            let think = if kind == "enabled" {
                Think::Required
            } else {
                Think::Optional
            };
            (think, budget)
        }
        Some("enabled" | "adaptive") => {
            notes.push(
                "`thinking` was ignored: the model's chat template has no reasoning block".into(),
            );
            (Think::Off, None)
        }
        _ => (Think::Off, None),
    }
}

/// Structured output: `output_config.format` (`{"type": "json_schema", "schema": …}`), or
/// the beta's top-level `output_format` of the same shape.
fn output_format(o: &Map<String, Value>) -> Result<Option<ResponseFormat>, ApiError> {
    match o.get("output_format").filter(|f| !f.is_null()) {
        Some(f) => params::response_format(Some(f), "output_format"),
        None => {
            let format = o.get("output_config").and_then(|c| c.get("format"));
            params::response_format(format, "output_config.format")
        }
    }
}

/// Read a Messages body (also `count_tokens`', which has no `max_tokens`).
pub fn read(app: &App, served: Served, body: &Value) -> Result<MessagesRequest, ApiError> {
    let o = params::object(body)?;
    let mut notes = params::ignored_fields(o, HONOURED, ACCEPTED);
    let mut messages = Vec::new();
    if let Some(system) = o.get("system").filter(|s| !s.is_null()) {
        messages.push(ChatMessage::text("system", system_text(system)?));
    }
    let items = match o.get("messages") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        _ => {
            return Err(ApiError::invalid(
                "messages",
                "`messages` must be a non-empty array",
            ));
        }
    };
    for (i, m) in items.iter().enumerate() {
        messages_of(i, m, &mut messages, &mut notes)?;
    }
    let tools = match o.get("tools") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => return Err(ApiError::invalid("tools", "`tools` must be an array")),
    };
    let pool = params::pool(tools, app.config.hosted_tools, "tools", anthropic_tool)?;
    let has_tools = !pool.tools.tools().is_empty();
    let mut req = Request::new(messages, pool.tools);
    req.not_offered = pool.not_offered;
    (req.tool_choice, req.parallel_tool_calls) = tool_choice(o, has_tools)?;
    let mut sampling = params::sampling(
        o,
        &["max_tokens"],
        &app.config,
        served.max_tokens,
        &mut notes,
    )?;
    let stop = match o.get("stop_sequences") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                ApiError::invalid("stop_sequences", "`stop_sequences` must be strings")
            })?,
        Some(_) => {
            return Err(ApiError::invalid(
                "stop_sequences",
                "`stop_sequences` must be an array of strings",
            ));
        }
    };
    sampling.stop = params::bounded_stop("stop_sequences", stop)?;
    let (think, budget) = think(&served, o, &mut notes);
    req.think = think;
    sampling.think_budget = budget.map(|b| b.min(sampling.max_tokens.saturating_sub(1)).max(1));
    req.sampling = sampling;
    req.votes = params::votes(o, app.config.votes)?;
    req.retry = params::retry(o)?;
    req.repeats = params::repeats(o, app.config.repeats)?;
    req.strict_schemas = params::strict_schemas(o, app.config.strict_schemas)?;
    req.response_format = output_format(o)?;
    let stream = params::opt_bool(o, "stream")?.unwrap_or(false);
    app.log_notes("/v1/messages", &notes);
    Ok(MessagesRequest {
        served,
        req,
        stream,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::HostedTools;

    /// A Messages tool reads with its own `input_schema`; a server tool is hosted.
    #[test]
    fn messages_tools_read_with_their_input_schema_and_server_tools_are_hosted() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let items = vec![
            json!({"name": "search", "input_schema": schema}),
            json!({"type": "custom", "name": "bare"}),
            json!({"type": "web_search_20250305", "name": "web_search"}),
        ];
        let p = params::pool(&items, HostedTools::Filter, "tools", anthropic_tool).expect("reads");
        let tools = p.tools.tools();
        assert_eq!(tools[0].parameters, schema);
        assert_eq!(tools[1].parameters, json!({"type": "object"}));
        assert_eq!(p.not_offered.len(), 1);
        let bad = vec![json!({"input_schema": schema})];
        let m = params::tests::pool_refusal(&bad, anthropic_tool);
        assert!(m.contains("/0/name"), "{m}");
    }
}
