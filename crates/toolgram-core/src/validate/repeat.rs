//! Duplicate/loop detection: a call with the same tool and the same arguments as one already
//! made in the conversation (or earlier in the same reply) is reported, so the caller can
//! refuse it instead of executing it again.
//!
//! Arguments compare as JSON values (key order does not matter). Pure: it must not execute
//! or drop calls itself.

use crate::define::message::ChatMessage;
use crate::define::tool::ToolCall;
use serde_json::Value;

/// A call that repeats an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatedCall {
    /// Index of the repeating call in the new reply.
    pub index: usize,
    /// The tool.
    pub tool: String,
    /// Where the first occurrence is: `"message N"` (conversation index) or `"this reply"`.
    pub first_seen: String,
}

/// Report calls of `reply` that repeat a call in `history` or earlier in `reply`.
pub fn repeated_calls(history: &[ChatMessage], reply: &[ToolCall]) -> Vec<RepeatedCall> {
    repeated_calls_since(history, 0, reply)
}

/// Report calls of `reply` that repeat a call in `history` from message `from` on, or earlier
/// in `reply` (`first_seen` names the message's index in all of `history`).
pub fn repeated_calls_since(
    history: &[ChatMessage],
    from: usize,
    reply: &[ToolCall],
) -> Vec<RepeatedCall> {
    let earlier: Vec<(usize, &str, Value)> = history
        .iter()
        .enumerate()
        .skip(from)
        .flat_map(|(i, m)| m.tool_calls.iter().flatten().map(move |c| (i, c)))
        .map(|(i, c)| {
            (
                i,
                c.function.name.as_str(),
                serde_json::from_str(&c.function.arguments).unwrap_or(Value::Null),
            )
        })
        .collect();
    let mut out = Vec::new();
    for (index, call) in reply.iter().enumerate() {
        let first_seen = earlier
            .iter()
            .find(|(_, name, args)| *name == call.name && *args == call.arguments)
            .map(|(i, _, _)| format!("message {i}"))
            .or_else(|| {
                reply[..index]
                    .iter()
                    .any(|c| c.name == call.name && c.arguments == call.arguments)
                    .then(|| "this reply".to_owned())
            });
        if let Some(first_seen) = first_seen {
            out.push(RepeatedCall {
                index,
                tool: call.name.clone(),
                first_seen,
            });
        }
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// A call with a fixed id, for the tests of this module and `runaway`.
    pub(in crate::validate) fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args,
        }
    }

    #[test]
    fn repeats_in_history_and_reply_are_reported() {
        let history: Vec<ChatMessage> = serde_json::from_value(json!([
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "w", "arguments": "{\"city\": \"Oslo\", \"unit\": \"c\"}"}}]},
            {"role": "tool", "tool_call_id": "1", "content": "cold"}
        ]))
        .expect("messages");
        let reply = [
            call("w", json!({"unit": "c", "city": "Oslo"})),
            call("w", json!({"city": "Bergen"})),
            call("w", json!({"city": "Bergen"})),
        ];
        let got = repeated_calls(&history, &reply);
        assert_eq!(
            got,
            vec![
                RepeatedCall {
                    index: 0,
                    tool: "w".into(),
                    first_seen: "message 1".into()
                },
                RepeatedCall {
                    index: 2,
                    tool: "w".into(),
                    first_seen: "this reply".into()
                },
            ]
        );
        assert!(repeated_calls(&history, &[call("w", json!({"city": "Oslo"}))]).is_empty());
    }
}
