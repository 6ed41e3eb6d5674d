//! What the round-trip tests write in one direction and read back in the other: one
//! conversation every API carries (a system prompt, a question, two calls, their results, an
//! answer), two calls (a function's and a grammar tool's), a usage and a finished reply. Test
//! support only: this module must not be compiled outside tests.

use crate::call::{Call, CallKind, Reply};
use serde_json::json;
use toolgram_core::define::reply::{FinishReason, Usage};
use toolgram_core::{ChatMessage, MessageToolCall, define::message::MessageFunction};

/// A conversation every API's messages carry whole: what one writes, its reader gives back.
pub(crate) fn conversation() -> Vec<ChatMessage> {
    let call = |id: &str, city: &str| MessageToolCall {
        id: id.into(),
        kind: "function".into(),
        function: MessageFunction {
            name: "get_weather".into(),
            arguments: json!({ "city": city }).to_string(),
        },
    };
    let result = |id: &str, text: &str| ChatMessage {
        tool_call_id: Some(id.into()),
        ..ChatMessage::text("tool", text)
    };
    vec![
        ChatMessage::text("system", "Be brief."),
        ChatMessage::text("user", "Weather in Paris and Rome?"),
        ChatMessage {
            content: None,
            tool_calls: Some(vec![call("c1", "Paris"), call("c2", "Rome")]),
            ..ChatMessage::text("assistant", "")
        },
        result("c1", "18 C"),
        result("c2", "21 C"),
        ChatMessage::text("assistant", "18 C in Paris, 21 C in Rome."),
    ]
}

/// Two calls: `get_weather` with `{"city": "Paris"}`, and a grammar tool's `SELECT 1`.
pub(crate) fn calls() -> [Call; 2] {
    [
        Call {
            id: "call_1".into(),
            name: "get_weather".into(),
            kind: CallKind::Function {
                arguments: json!({"city": "Paris"}),
            },
        },
        Call {
            id: "call_2".into(),
            name: "sql".into(),
            kind: CallKind::Custom {
                input: "SELECT 1".into(),
            },
        },
    ]
}

/// 100 prompt tokens (60 of them cached), 7 generated.
pub(crate) const USAGE: Usage = Usage {
    prompt_tokens: 100,
    completion_tokens: 7,
    cached_prompt_tokens: 60,
};

/// A finished reply with [`USAGE`], ended by its calls if it has any.
pub(crate) fn reply<'a>(
    reasoning: Option<&'a str>,
    content: Option<&'a str>,
    calls: &'a [Call],
) -> Reply<'a> {
    Reply {
        reasoning,
        content,
        calls,
        finish_reason: if calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        },
        usage: Some(USAGE),
    }
}
