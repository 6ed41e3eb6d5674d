//! The Responses API's `input`, read into chat messages and written from them. Read: a string,
//! or items — `message` of any role (`developer` as `system`), `function_call` and
//! `custom_tool_call` (consecutive calls one assistant message; a custom call's input as
//! `{"input": …}` arguments), their `_output`s, `reasoning` (its text, ours from
//! `encrypted_content`, goes with the assistant turn after it), `additional_tools` (where a
//! coding agent sends its tools), the hosted MCP tool's items as a loop wrote them
//! (`mcp_call` a call and its result, `mcp_approval_request` a call waiting,
//! `mcp_approval_response` an answer to one, `mcp_list_tools` skipped: the server lists its
//! tools itself); other items (a hosted tool's) left out with a note. Written:
//! messages as `{role, content}`, calls as `function_call`, results as
//! `function_call_output`. This module must not decide which fields of a request are honoured.

use crate::error::WireError;
use crate::responses::encrypted::{ENCRYPTED_PREFIX, unhex};
use serde_json::{Value, json};
use toolgram_core::define::message::{MessageFunction, parts_text};
use toolgram_core::{ChatMessage, MessageToolCall};

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

/// A call in a chat message: its id, tool and arguments text.
pub fn call_message(call_id: &str, name: &str, arguments: String) -> MessageToolCall {
    MessageToolCall {
        id: call_id.to_owned(),
        kind: "function".to_owned(),
        function: MessageFunction {
            name: name.to_owned(),
            arguments,
        },
    }
}

/// Append `call` to the conversation: to the assistant message before it where that one
/// calls, else as a new assistant message carrying the `reasoning` read before it.
fn push_call(out: &mut Vec<ChatMessage>, call: MessageToolCall, reasoning: &mut Option<String>) {
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

/// What `input` carries beside its messages.
#[derive(Debug, Default)]
pub struct InputExtras {
    /// The tools of `additional_tools` items.
    pub tools: Vec<Value>,
    /// A note for each item left out.
    pub notes: Vec<String>,
    /// `mcp_approval_response` items: the request each answers and whether it approves.
    pub approvals: Vec<(String, bool)>,
}

/// `input` → chat messages; what else it carries to `extras`.
pub fn read(input: &Value, extras: &mut InputExtras) -> Result<Vec<ChatMessage>, WireError> {
    let items = match input {
        Value::String(s) => return Ok(vec![ChatMessage::text("user", s.clone())]),
        Value::Array(items) => items,
        _ => {
            return Err(WireError::invalid(
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
                        return Err(WireError::invalid(
                            &at,
                            "a message needs role user, assistant, system or developer",
                        ));
                    }
                };
                let content = item
                    .get("content")
                    .and_then(text_of)
                    .ok_or_else(|| WireError::invalid(&at, "a message needs `content`"))?;
                let mut m = ChatMessage::text(role, content);
                if role == "assistant" {
                    m.reasoning_content = reasoning.take();
                }
                out.push(m);
            }
            "function_call" | "custom_tool_call" => {
                let (Some(call_id), Some(name)) = (s("call_id"), s("name")) else {
                    return Err(WireError::invalid(&at, "a call needs `call_id` and `name`"));
                };
                let arguments = if kind == "function_call" {
                    s("arguments").unwrap_or("{}").to_owned()
                } else {
                    json!({"input": s("input").unwrap_or("")}).to_string()
                };
                push_call(
                    &mut out,
                    call_message(call_id, name, arguments),
                    &mut reasoning,
                );
            }
            "mcp_call" | "mcp_approval_request" => {
                let (Some(id), Some(name)) = (s("id"), s("name")) else {
                    return Err(WireError::invalid(&at, "an MCP call needs `id` and `name`"));
                };
                // A call that ran once approved answers the waiting call of its approval
                // request (whose id is the call's), not a new one.
                let waiting = s("approval_request_id").filter(|w| {
                    out.iter()
                        .any(|m| m.tool_calls.iter().flatten().any(|c| c.id == *w))
                });
                let id = waiting.unwrap_or(id);
                if waiting.is_none() {
                    let arguments = s("arguments").unwrap_or("{}").to_owned();
                    push_call(&mut out, call_message(id, name, arguments), &mut reasoning);
                }
                if kind == "mcp_call" {
                    let result = match (s("output"), item.get("error")) {
                        (Some(output), _) => output.to_owned(),
                        (None, Some(e)) if !e.is_null() => format!("error: {e}"),
                        _ => String::new(),
                    };
                    let mut m = ChatMessage::text("tool", result);
                    m.tool_call_id = Some(id.to_owned());
                    out.push(m);
                }
            }
            "mcp_approval_response" => extras
                .approvals
                .push(crate::responses::mcp::approval_response(item, &at)?),
            "mcp_list_tools" => {}
            "function_call_output" | "custom_tool_call_output" => {
                // Codex CLI sends its goal as an output answering no call (`name`, no `call_id`):
                // no chat template can place it, so it is said and left out.
                let Some(call_id) = s("call_id") else {
                    let name = s("name").map(|n| format!(" (`{n}`)")).unwrap_or_default();
                    extras.notes.push(format!(
                        "{at}: a `{kind}`{name} without `call_id` answers no call and was left out"
                    ));
                    continue;
                };
                let output = item.get("output").and_then(text_of).unwrap_or_default();
                let mut m = ChatMessage::text("tool", output);
                m.tool_call_id = Some(call_id.to_owned());
                out.push(m);
            }
            "reasoning" => reasoning = reasoning_text(item),
            "additional_tools" => match item.get("tools") {
                Some(Value::Array(more)) => extras.tools.extend(more.iter().cloned()),
                _ => return Err(WireError::invalid(&at, "`additional_tools` needs `tools`")),
            },
            other => extras.notes.push(format!(
                "{at}: item type `{other}` (a hosted tool's) is not run here and was left out"
            )),
        }
    }
    Ok(out)
}

/// Chat messages as `input` items (tool results as `function_call_output`, earlier calls as
/// `function_call`).
pub fn write(messages: &[ChatMessage]) -> Value {
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

    /// What the provider writes, the server reads back as the same conversation.
    #[test]
    fn a_conversation_written_reads_back_the_same() {
        let conversation = crate::fixtures::conversation();
        let mut extras = InputExtras::default();
        let read_back = read(&write(&conversation), &mut extras).expect("reads");
        assert_eq!(read_back, conversation);
        assert!(extras.tools.is_empty() && extras.notes.is_empty());
    }

    /// Codex CLI's goal rides in an output with a `name` and no `call_id` (seen on its second
    /// request): it answers no call, so it is left out and said.
    #[test]
    fn an_output_answering_no_call_is_left_out_and_said() {
        let input = json!([{"role": "user", "content": "hi"},
            {"type": "function_call_output", "name": "goal_objective", "namespace": "agent",
             "output": "Create hello.py"}]);
        let mut extras = InputExtras::default();
        let read_back = read(&input, &mut extras).expect("reads");
        let notes = extras.notes;
        assert_eq!(read_back, vec![ChatMessage::text("user", "hi")]);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("`goal_objective`") && notes[0].contains("left out"),
            "{notes:?}"
        );
    }

    #[test]
    fn a_bad_item_is_named() {
        let e = read(
            &json!([{"type": "function_call", "name": "f"}]),
            &mut InputExtras::default(),
        );
        assert_eq!(e.expect_err("refused").param, "input[0]");
    }

    /// A loop's output items sent back as input (`store: false`): a call run is the call and
    /// its result, a call waiting for approval is a call, an approval is read aside, a list
    /// is skipped.
    #[test]
    fn mcp_items_sent_back_read_as_the_conversation_they_were() {
        let input = json!([{"role": "user", "content": "hi"},
            {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "notes", "tools": []},
            {"type": "mcp_call", "id": "mcp_1", "server_label": "notes", "name": "list",
             "arguments": "{}", "output": "a.txt"},
            {"type": "mcp_approval_request", "id": "call_2", "server_label": "notes",
             "name": "write", "arguments": "{\"t\":1}"},
            {"type": "mcp_approval_response", "approval_request_id": "call_2", "approve": true},
            {"type": "mcp_call", "id": "mcp_2", "server_label": "notes", "name": "write",
             "arguments": "{\"t\":1}", "output": "written", "approval_request_id": "call_2"}]);
        let mut extras = InputExtras::default();
        let m = read(&input, &mut extras).expect("reads");
        assert_eq!(m.len(), 5, "{m:?}");
        assert_eq!(m[2].tool_call_id.as_deref(), Some("mcp_1"));
        assert_eq!(m[2].content.as_deref(), Some("a.txt"));
        let waiting = m[3].tool_calls.as_ref().expect("a call");
        assert_eq!(
            waiting.len(),
            1,
            "the approved call is not made twice: {m:?}"
        );
        assert_eq!(waiting[0].id, "call_2");
        // The call that ran once approved answers the waiting call.
        assert_eq!(m[4].tool_call_id.as_deref(), Some("call_2"));
        assert_eq!(m[4].content.as_deref(), Some("written"));
        assert_eq!(extras.approvals, [("call_2".to_owned(), true)]);
        assert!(extras.notes.is_empty(), "{:?}", extras.notes);
    }
}
