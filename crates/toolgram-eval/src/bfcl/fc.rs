//! BFCL's function-calling protocol as its OpenAI chat-completions handler
//! (`OpenAICompletionsHandler`, bfcl-eval 2026.3.23) runs it: the request it sends (the item's
//! messages as they are, no added system prompt, the tools as BFCL converts them with its
//! language hint, `temperature` 0.001 — `bfcl generate`'s default — `store: false`, no
//! `max_tokens`, no `tool_choice`) and how it reads the reply (`decode_ast`: each
//! `tool_calls[i].function.arguments` through `json.loads`; a reply without `tool_calls` is its
//! text, which does not decode) and the verdict its evaluator gives (`_evaluate_single_ast_entry`
//! and `_evaluate_single_relevance_entry`: a failed decode is a miss where a call was due and a
//! correct refusal on `irrelevance`).
//!
//! This module must not send anything or run a model: it builds and reads JSON.

use super::checker::{self, Call, Miss};
use super::{Item, Scoring};
use serde_json::{Map, Value, json};

/// BFCL's default temperature (`bfcl generate --temperature`).
pub const TEMPERATURE: f32 = 0.001;

/// The body BFCL's handler sends for `item` (`model` is the name on the wire).
pub fn request_body(item: &Item, model: &str) -> Value {
    let mut body = json!({
        "messages": item.messages,
        "model": model,
        "temperature": TEMPERATURE,
        "store": false,
    });
    if !item.tools_as_bfcl_sends.is_empty() {
        body["tools"] = Value::Array(item.tools_as_bfcl_sends.clone());
    }
    body
}

fn miss(kind: &str, message: impl Into<String>) -> Miss {
    Miss {
        kind: kind.to_owned(),
        message: message.into(),
    }
}

/// The calls BFCL's handler decodes from a reply's `message`, or why it could not: a reply
/// without `tool_calls` (its text does not decode), arguments that are not JSON
/// (`decoder_failed`), or arguments that are JSON but not an object (`decoder_wrong_output_format`).
pub fn decode(message: &Value) -> Result<Vec<Call>, Miss> {
    let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else {
        return Err(miss(
            "ast_decoder:decoder_failed",
            "Invalid syntax. Failed to decode AST: the reply has no tool_calls.",
        ));
    };
    let mut out = Vec::with_capacity(calls.len());
    for c in calls {
        let name = c["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let arguments: Value = match &c["function"]["arguments"] {
            Value::String(s) => serde_json::from_str(s).map_err(|e| {
                miss(
                    "ast_decoder:decoder_failed",
                    format!("Invalid syntax. Failed to decode AST. {e}"),
                )
            })?,
            other => other.clone(),
        };
        let Value::Object(arguments) = arguments else {
            return Err(miss(
                "ast_decoder:decoder_wrong_output_format",
                "Did not output in the specified format.",
            ));
        };
        out.push(Call { name, arguments });
    }
    Ok(out)
}

/// BFCL's verdict on a reply's `message` for `item`, and the calls it decoded (none when the
/// decode failed).
pub fn verdict(item: &Item, message: &Value) -> (Result<(), Miss>, Vec<Call>) {
    match (decode(message), item.scoring) {
        (Ok(calls), _) => (checker::check(item, &calls), calls),
        // No decodable call: BFCL's correct refusal.
        (Err(_), Scoring::NoCall) => (Ok(()), Vec::new()),
        (Err(m), Scoring::AnyCall) => (
            Err(miss("relevance_error:decoder_failed", m.message)),
            Vec::new(),
        ),
        (Err(m), _) => (Err(m), Vec::new()),
    }
}

/// The OpenAI message BFCL's result file stands for: its `result` is the decoded list
/// `[{name: arguments text}]` when the reply had `tool_calls`, the reply's text otherwise.
pub fn message_of_result(result: &Value) -> Value {
    match result {
        Value::Array(calls) => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .filter_map(Value::as_object)
                .flat_map(Map::iter)
                .map(|(name, arguments)| {
                    json!({"type": "function", "function": {"name": name, "arguments": arguments}})
                })
                .collect();
            json!({"role": "assistant", "content": null, "tool_calls": tool_calls})
        }
        other => json!({"role": "assistant", "content": other}),
    }
}
