//! Chat Completions' `messages`, read into chat messages and written from them. Core's
//! [`ChatMessage`] has OpenAI's field names, so a message is its own JSON; read: a role must
//! be one of Chat's (`developer` read as `system`), and an earlier custom-tool call
//! (`{"type":"custom","custom":{"name","input"}}`) is read in the function shape the
//! conversation renders (`{"input": …}` arguments). This module must not decide which fields
//! of a request are honoured.

use crate::error::WireError;
use serde_json::{Map, Value, json};
use toolgram_core::ChatMessage;

/// The roles a Chat Completions message may have.
const ROLES: &[&str] = &["system", "developer", "user", "assistant", "tool"];

/// A request's `messages`: a non-empty array of messages with Chat's roles.
pub fn read(o: &Map<String, Value>) -> Result<Vec<ChatMessage>, WireError> {
    let messages = match o.get("messages") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err(WireError::invalid("messages", "`messages` is empty")),
        _ => {
            return Err(WireError::invalid(
                "messages",
                "`messages` must be an array",
            ));
        }
    };
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("");
            if !ROLES.contains(&role) {
                return Err(WireError::invalid(
                    format!("messages[{i}].role"),
                    format!("unknown role `{role}`: one of {}", ROLES.join(", ")),
                ));
            }
            serde_json::from_value(with_custom_calls_as_functions(m))
                .map_err(|e| WireError::invalid(format!("messages[{i}]"), e.to_string()))
        })
        .collect()
}

/// An earlier assistant message's custom-tool calls in the function shape the conversation
/// renders, and `developer` as `system`.
fn with_custom_calls_as_functions(m: &Value) -> Value {
    let mut m = m.clone();
    if m.get("role").and_then(Value::as_str) == Some("developer") {
        m["role"] = json!("system");
    }
    if let Some(calls) = m.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for c in calls {
            if let Some(custom) = c.get("custom").cloned() {
                let input = custom.get("input").and_then(Value::as_str).unwrap_or("");
                *c = json!({"id": c.get("id").cloned().unwrap_or(Value::Null), "type": "function",
                    "function": {"name": custom.get("name").cloned().unwrap_or(Value::Null),
                        "arguments": json!({ "input": input }).to_string()}});
            }
        }
    }
    m
}

/// Chat messages as Chat Completions' `messages` array.
pub fn write(messages: &[ChatMessage]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the provider writes, the server reads back as the same conversation.
    #[test]
    fn a_conversation_written_reads_back_the_same() {
        let conversation = crate::fixtures::conversation();
        let body = json!({"messages": write(&conversation)});
        let read_back = read(body.as_object().expect("object")).expect("reads");
        assert_eq!(read_back, conversation);
    }

    /// `developer` is a system message, a custom call is read as a function call with its
    /// input, and an unknown role is named.
    #[test]
    fn developer_and_custom_calls_are_read_as_the_template_takes_them() {
        let body = json!({"messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "custom",
                "custom": {"name": "sql", "input": "SELECT 1"}}]},
        ]});
        let m = read(body.as_object().expect("object")).expect("reads");
        assert_eq!(m[0].role, "system");
        let calls = m[1].tool_calls.as_deref().unwrap_or_default();
        assert_eq!(calls[0].function.arguments, r#"{"input":"SELECT 1"}"#);
        let bad = json!({"messages": [{"role": "robot", "content": "x"}]});
        let e = read(bad.as_object().expect("object")).expect_err("refused");
        assert_eq!(e.param, "messages[0].role");
    }
}
