//! The Responses API's reply, written and read. Written: output items — `reasoning` (its text
//! also in `encrypted_content` when asked, so a later request gives it back), `message`,
//! `function_call` with its `namespace`, `custom_tool_call` — in a `response` object that
//! echoes the request's fields, `incomplete` when `max_output_tokens` cut it; the usage object.
//! Read: a reply's `output` text, calls and usage. This module must not store responses.

use crate::call::{CallKind, Reply};
use crate::error::WireError;
use crate::read::{call, count, string_args};
use crate::responses::encrypted::{ENCRYPTED_PREFIX, hex};
use serde_json::{Value, json};
use std::collections::HashMap;
use toolgram_core::ToolCall;
use toolgram_core::define::message::parts_text;
use toolgram_core::define::reply::{FinishReason, Usage};

/// What a request asked of its reply beyond the run, read with the request.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// Keep the response for `previous_response_id`.
    pub store: bool,
    /// Request fields the response object echoes.
    pub echo: Value,
    /// The namespace of each tool that came in a `namespace` group.
    pub namespaces: HashMap<String, String>,
    /// Reasoning items carry `encrypted_content`.
    pub encrypted_reasoning: bool,
}

/// What every object of one response repeats: its id, creation time and model.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// `resp_…`.
    pub id: String,
    /// Unix seconds.
    pub created_at: u64,
    /// The model id the server answers as.
    pub model: String,
}

/// A finished call's output item, with its tool's namespace where the request grouped it.
pub(crate) fn call_item(
    asked: &Asked,
    id: &str,
    call_id: &str,
    name: &str,
    kind: &CallKind,
) -> Value {
    let mut item = match kind {
        CallKind::Function { arguments } => json!({"type": "function_call", "id": id,
            "call_id": call_id, "name": name, "arguments": arguments.to_string(),
            "status": "completed"}),
        CallKind::Custom { input } => json!({"type": "custom_tool_call", "id": id,
            "call_id": call_id, "name": name, "input": input, "status": "completed"}),
    };
    if let Some(ns) = asked.namespaces.get(name) {
        item["namespace"] = json!(ns);
    }
    item
}

/// A finished `message` item.
pub(crate) fn message_item(id: &str, text: &str) -> Value {
    json!({"type": "message", "id": id, "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// A finished `reasoning` item.
pub(crate) fn reasoning_item(encrypted: bool, id: &str, text: &str) -> Value {
    let mut item = json!({"type": "reasoning", "id": id, "summary": [],
        "content": [{"type": "reasoning_text", "text": text}]});
    if encrypted {
        item["encrypted_content"] = json!(format!("{ENCRYPTED_PREFIX}{}", hex(text)));
    }
    item
}

/// Output items of a reply, each with an id from `new_id(prefix)`.
pub fn output_items(
    asked: &Asked,
    r: &Reply,
    new_id: &mut dyn FnMut(&str) -> String,
) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(t) = r.reasoning {
        items.push(reasoning_item(asked.encrypted_reasoning, &new_id("rs"), t));
    }
    if let Some(t) = r.content {
        items.push(message_item(&new_id("msg"), t));
    }
    for c in r.calls {
        items.push(call_item(asked, &new_id("fc"), &c.id, &c.name, &c.kind));
    }
    items
}

/// Responses' usage object.
pub fn usage(u: Option<Usage>) -> Value {
    u.map_or(Value::Null, |u| {
        json!({
        "input_tokens": u.prompt_tokens, "output_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
        "input_tokens_details": {"cached_tokens": u.cached_prompt_tokens},
        "output_tokens_details": {"reasoning_tokens": 0}})
    })
}

/// The `response` object: `status`, `output`, the usage, the request's echoed fields and
/// `toolgram`.
pub fn response_object(
    env: &Envelope,
    asked: &Asked,
    status: &str,
    output: Vec<Value>,
    used: Option<Usage>,
    toolgram: Value,
) -> Value {
    let mut v = json!({"id": env.id, "object": "response", "created_at": env.created_at,
        "status": status, "model": env.model, "output": output,
        "usage": usage(used), "error": null,
        "incomplete_details": null, "store": asked.store});
    if let (Value::Object(o), Value::Object(e)) = (&mut v, &asked.echo) {
        for (k, val) in e {
            o.entry(k.clone()).or_insert_with(|| val.clone());
        }
    }
    v["toolgram"] = toolgram;
    v
}

/// The response object of a finished reply: `incomplete` when `max_output_tokens` cut its text.
pub fn finished(
    env: &Envelope,
    asked: &Asked,
    output: Vec<Value>,
    r: &Reply,
    toolgram: Value,
) -> Value {
    if r.finish_reason == FinishReason::Length {
        cut(env, asked, output, r.usage, toolgram)
    } else {
        response_object(env, asked, "completed", output, r.usage, toolgram)
    }
}

/// The response object of a generation cut by `max_output_tokens`: `incomplete`, the items
/// finished before the cut, the tokens it used.
pub fn cut(
    env: &Envelope,
    asked: &Asked,
    output: Vec<Value>,
    used: Option<Usage>,
    toolgram: Value,
) -> Value {
    let mut body = response_object(env, asked, "incomplete", output, used, toolgram);
    body["incomplete_details"] = json!({"reason": "max_output_tokens"});
    body
}

/// A reply's output items; `None` when it has no `output` array.
fn output(body: &Value) -> Option<&Vec<Value>> {
    body.get("output").and_then(Value::as_array)
}

/// A reply's text: its `message` items' text parts joined; `None` when it has no `output`.
pub fn read_text(body: &Value) -> Option<String> {
    Some(
        output(body)?
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
            .filter_map(|i| i.get("content").and_then(Value::as_array))
            .map(|parts| parts_text(parts, ""))
            .collect(),
    )
}

/// A reply's calls: `function_call` items (arguments a JSON string) and `custom_tool_call`
/// items (as `{"input": text}`), each `call_{i}` for the `i`th item without a `call_id`.
pub fn read_calls(body: &Value) -> Result<Vec<ToolCall>, WireError> {
    let mut calls = Vec::new();
    for (i, it) in output(body).into_iter().flatten().enumerate() {
        let field = |k: &str| it.get(k).and_then(Value::as_str).unwrap_or("");
        match it.get("type").and_then(Value::as_str) {
            Some("custom_tool_call") => {
                let text = it.get("input").cloned().unwrap_or(Value::Null);
                calls.push(call(
                    field("call_id"),
                    i,
                    field("name"),
                    json!({ "input": text }),
                ));
            }
            Some("function_call") => {
                let args = string_args(it.get("arguments").unwrap_or(&Value::Null))
                    .map_err(|m| WireError::invalid(format!("output[{i}].arguments"), m))?;
                calls.push(call(field("call_id"), i, field("name"), args));
            }
            _ => {}
        }
    }
    Ok(calls)
}

/// A reply's usage: input, output and cached tokens.
pub fn read_usage(body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
    (
        count(body, "/usage/input_tokens"),
        count(body, "/usage/output_tokens"),
        count(body, "/usage/input_tokens_details/cached_tokens"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the server writes, the provider reads back: text, calls and usage; a namespace
    /// and encrypted reasoning where asked.
    #[test]
    fn a_response_written_reads_back_the_same() {
        let calls = crate::fixtures::calls();
        let r = crate::fixtures::reply(Some("hmm"), Some("Reading."), &calls);
        let asked = Asked {
            store: true,
            echo: json!({"tool_choice": "auto"}),
            namespaces: HashMap::from([("get_weather".to_owned(), "weather".to_owned())]),
            encrypted_reasoning: true,
        };
        let env = Envelope {
            id: "resp_1".into(),
            created_at: 0,
            model: "m".into(),
        };
        let mut n = 0;
        let items = output_items(&asked, &r, &mut |p| {
            n += 1;
            format!("{p}_{n}")
        });
        let body = finished(&env, &asked, items, &r, json!({}));
        assert_eq!(body["status"], "completed");
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(
            body["output"][0]["encrypted_content"]
                .as_str()
                .map(|s| s.starts_with(ENCRYPTED_PREFIX)),
            Some(true)
        );
        assert_eq!(body["output"][2]["namespace"], "weather");
        assert_eq!(read_text(&body).as_deref(), Some("Reading."));
        let read_back = read_calls(&body).expect("reads");
        assert_eq!(read_back[0].arguments, json!({"city": "Paris"}));
        assert_eq!(read_back[1].arguments, json!({"input": "SELECT 1"}));
        assert_eq!(read_usage(&body), (Some(100), Some(7), Some(60)));
        let cut_short = Reply {
            finish_reason: FinishReason::Length,
            ..r
        };
        let incomplete = finished(&env, &asked, Vec::new(), &cut_short, json!({}));
        assert_eq!(
            incomplete["incomplete_details"]["reason"],
            "max_output_tokens"
        );
    }
}
