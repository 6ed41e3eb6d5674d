//! Anthropic's `system` and `messages`, read into chat messages and written from them. Read:
//! `system` (a string or text blocks; `system` messages among the others join it), messages of
//! content blocks (`text`, `tool_use`, `tool_result` with `is_error`, `thinking` as the turn's
//! reasoning; other blocks — `redacted_thinking`, images, server-tool blocks — left out with a
//! note). Written: `system` apart, tool results as `tool_result` blocks of a user turn, an
//! assistant turn's text and calls as `text` and `tool_use` blocks. This module must not
//! decide which fields of a request are honoured.

use crate::error::WireError;
use serde_json::{Map, Value, json};
use toolgram_core::define::message::{MessageFunction, parts_text};
use toolgram_core::{ChatMessage, MessageToolCall};

/// The text of `system`: a string, or text blocks joined by blank lines.
fn system_text(v: &Value, at: &str) -> Result<String, WireError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Array(blocks) => Ok(parts_text(blocks, "\n\n")),
        _ => Err(WireError::invalid(
            at,
            "`system` must be a string or an array of text blocks",
        )),
    }
}

/// A `tool_result`'s content as text: a string, or its text blocks joined.
fn result_text(block: &Value, notes: &mut Vec<String>, at: &str) -> String {
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

/// A request's `system` and `messages` as chat messages (the system prompt first), with a
/// note in `notes` for each block left out.
pub fn read(
    o: &Map<String, Value>,
    notes: &mut Vec<String>,
) -> Result<Vec<ChatMessage>, WireError> {
    let mut messages = Vec::new();
    if let Some(system) = o.get("system").filter(|s| !s.is_null()) {
        messages.push(ChatMessage::text("system", system_text(system, "system")?));
    }
    let items = match o.get("messages") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        _ => {
            return Err(WireError::invalid(
                "messages",
                "`messages` must be a non-empty array",
            ));
        }
    };
    for (i, m) in items.iter().enumerate() {
        read_message(i, m, &mut messages, notes)?;
    }
    Ok(messages)
}

/// One Anthropic message → chat messages: a user turn's tool results become `tool` messages
/// (before its text), an assistant turn's blocks one assistant message.
fn read_message(
    i: usize,
    m: &Value,
    out: &mut Vec<ChatMessage>,
    notes: &mut Vec<String>,
) -> Result<(), WireError> {
    let at = format!("messages[{i}]");
    let role = match m.get("role").and_then(Value::as_str) {
        Some(r @ ("user" | "assistant")) => r,
        Some("system") => {
            // Claude Code sends its environment as a system message among the others; chat
            // templates want one system prompt, first: it joins that.
            let text = system_text(m.get("content").unwrap_or(&Value::Null), &at)
                .map_err(|_| WireError::invalid(&at, "a system message needs text content"))?;
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
            return Err(WireError::invalid(
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
            return Err(WireError::invalid(
                format!("{at}.content"),
                "`content` must be a string or an array of blocks",
            ));
        }
    };
    let mut text = Vec::new();
    let mut calls = Vec::new();
    let mut reasoning = Vec::new();
    let mut flushed = false;
    for (j, b) in blocks.iter().enumerate() {
        let at = format!("{at}.content[{j}]");
        let s = |k: &str| b.get(k).and_then(Value::as_str);
        match b.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => text.push(s("text").unwrap_or("").to_owned()),
            "thinking" if role == "assistant" => {
                reasoning.push(s("thinking").unwrap_or("").to_owned());
            }
            "tool_use" | "mcp_tool_use" if role == "assistant" => {
                let (Some(id), Some(name)) = (s("id"), s("name")) else {
                    return Err(WireError::invalid(
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
                    WireError::invalid(&at, "a tool_result block needs `tool_use_id`")
                })?;
                let mut t = ChatMessage::text("tool", result_text(b, notes, &at));
                t.tool_call_id = Some(id.to_owned());
                out.push(t);
            }
            // A call a server ran inside the assistant's turn (the MCP connector): its
            // result ends the turn so far, as a tool message after it.
            "mcp_tool_result" if role == "assistant" => {
                let id = s("tool_use_id").ok_or_else(|| {
                    WireError::invalid(&at, "an mcp_tool_result block needs `tool_use_id`")
                })?;
                out.push(assistant_turn(&mut text, &mut calls, &mut reasoning));
                flushed = true;
                let mut t = ChatMessage::text("tool", result_text(b, notes, &at));
                t.tool_call_id = Some(id.to_owned());
                out.push(t);
            }
            "mcp_tool_listing" if role == "assistant" => {}
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
    if !(flushed && text.is_empty() && calls.is_empty() && reasoning.is_empty()) {
        out.push(assistant_turn(&mut text, &mut calls, &mut reasoning));
    }
    Ok(())
}

/// The assistant message of the blocks read so far (taken).
fn assistant_turn(
    text: &mut Vec<String>,
    calls: &mut Vec<MessageToolCall>,
    reasoning: &mut Vec<String>,
) -> ChatMessage {
    let (text, calls, reasoning) = (
        std::mem::take(text),
        std::mem::take(calls),
        std::mem::take(reasoning),
    );
    ChatMessage {
        role: "assistant".into(),
        content: (!text.is_empty()).then(|| text.join("\n")),
        tool_calls: (!calls.is_empty()).then_some(calls),
        tool_call_id: None,
        name: None,
        reasoning_content: (!reasoning.is_empty()).then(|| reasoning.join("\n")),
    }
}

/// Chat messages as Anthropic's `system` string and `messages`: system messages joined by
/// blank lines, tool results as `tool_result` blocks, an assistant turn's calls as
/// `tool_use` blocks (arguments that are not JSON sent as `{}`).
pub fn write(messages: &[ChatMessage]) -> (String, Vec<Value>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What the provider writes, the server reads back as the same conversation.
    #[test]
    fn a_conversation_written_reads_back_the_same() {
        let conversation = crate::fixtures::conversation();
        let (system, messages) = write(&conversation);
        let body = json!({"system": system, "messages": messages});
        let mut notes = Vec::new();
        let read_back = read(body.as_object().expect("object"), &mut notes).expect("reads");
        assert_eq!(read_back, conversation);
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// A system message among the others joins the system prompt; an error result is said.
    #[test]
    fn system_messages_join_the_system_prompt_and_errors_are_marked() {
        let body = json!({"system": [{"type": "text", "text": "A"}], "messages": [
            {"role": "system", "content": "B"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                "content": [{"type": "text", "text": "boom"}, {"type": "image"}], "is_error": true}]},
        ]});
        let mut notes = Vec::new();
        let m = read(body.as_object().expect("object"), &mut notes).expect("reads");
        assert_eq!(m[0].content.as_deref(), Some("A\n\nB"));
        assert_eq!(m[1].content.as_deref(), Some("Error: boom"));
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn a_bad_field_is_named() {
        let bad = |body: Value| {
            read(body.as_object().expect("object"), &mut Vec::new()).expect_err("refused")
        };
        assert_eq!(bad(json!({"messages": []})).param, "messages");
        assert_eq!(
            bad(json!({"system": 3, "messages": [{"role": "user", "content": "x"}]})).param,
            "system"
        );
        let e =
            bad(json!({"messages": [{"role": "assistant", "content": [{"type": "tool_use"}]}]}));
        assert_eq!(e.param, "messages[0].content[0]");
    }
}
