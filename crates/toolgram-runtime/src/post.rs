//! What every path does to a reply after the retry loop accepted it: report (or, when asked,
//! refuse) calls that repeat earlier ones, say which tools were left out of the pool, and
//! find a call hidden in a reply's text ([`hidden_call`]), which its path then decodes again
//! as a call. This module must not touch a model or a provider.

use crate::error::RunError;
use crate::request::{Repeats, Request};
use crate::response::{Call, CallKind, FilteredTool, Response};
use serde_json::Value;
use std::time::Instant;
use toolgram_core::define::request::Mode;
use toolgram_core::{ToolCall, ToolSet, validate};

/// Calls as the run stage returns them: grammar tools' calls carry their input text.
pub(crate) fn typed_calls(tools: &ToolSet, calls: Vec<ToolCall>) -> Vec<Call> {
    calls
        .into_iter()
        .map(|c| {
            let custom = tools.get(&c.name).is_some_and(|t| t.grammar.is_some());
            let kind = if custom {
                CallKind::Custom {
                    input: c
                        .arguments
                        .get("input")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                }
            } else {
                CallKind::Function {
                    arguments: c.arguments,
                }
            };
            Call {
                id: c.id,
                name: c.name,
                kind,
            }
        })
        .collect()
}

/// The calls of a reply that [`crate::Repeats::Forbid`] leaves out: each identical to a call
/// made since the user's last message, or to one of the latest turn of calls where the user
/// spoke after it — the loop of an agent that calls again after each result and never ends —,
/// to a tool not marked `repeatable`. A call made before the user's last message and before
/// other calls stays: those calls may have moved the state it reads or changes (`cd temp`,
/// later `cd ..` and a move, then `cd temp` again in a later turn is one of BFCL's
/// multi-turn answers, which a guard against every earlier call made unreachable).
pub(crate) fn excluded_repeats(req: &Request, calls: &[ToolCall]) -> Vec<validate::RepeatedCall> {
    if !crate::request::Repeats::may_exclude(req) {
        return Vec::new();
    }
    let Some(latest) = req.messages.iter().rposition(made_calls) else {
        return Vec::new();
    };
    let from = match req.messages.iter().rposition(|m| m.role == "user") {
        Some(spoke) if spoke < latest => spoke + 1,
        Some(_) => latest,
        None => 0,
    };
    validate::repeated_calls_since(&req.messages, from, calls)
        .into_iter()
        .filter(|r| r.first_seen.starts_with("message"))
        .filter(|r| req.tools.get(&r.tool).is_some_and(|t| !t.repeatable))
        .collect()
}

/// Whether a message of the conversation made calls.
fn made_calls(m: &toolgram_core::ChatMessage) -> bool {
    m.tool_calls.as_ref().is_some_and(|c| !c.is_empty())
}

/// The run stage's calls as core's (a grammar tool's input as `{"input": …}`).
pub(crate) fn core_calls(calls: &[Call]) -> Vec<ToolCall> {
    calls
        .iter()
        .map(|c| ToolCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: match &c.kind {
                CallKind::Function { arguments } => arguments.clone(),
                CallKind::Custom { input } => serde_json::json!({ "input": input }),
            },
        })
        .collect()
}

/// Finish `response` for `req`: repeats, the filtered-out tools and the wall clock.
pub(crate) fn finish(
    req: &Request,
    filtered_out: &[FilteredTool],
    started: Instant,
    mut response: Response,
) -> Result<Response, RunError> {
    let calls = core_calls(&response.tool_calls);
    let repeats = validate::repeated_calls(&req.messages, &calls);
    if req.refuse_repeats && !repeats.is_empty() {
        return Err(RunError::RepeatedCall(repeats));
    }
    if req.repeats != crate::request::Repeats::Allow {
        response.repeated_calls = repeats;
    }
    response.filtered_out = filtered_out.to_vec();
    response.timings.total_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(response)
}

/// The call to an offered tool that a reply without calls hides in its `content`, where the
/// request lets the model call (not under `tool_choice: none`, nor where the text is the
/// answer in a `response_format` beside the tools): its path then decodes the reply again
/// with a call to that tool required ([`forced`]), so the call is made by the grammar — valid
/// by construction — and never passed off as an answer.
pub(crate) fn hidden_call(
    req: &Request,
    content: Option<&str>,
    made_calls: bool,
) -> Option<validate::HiddenCall> {
    if made_calls || req.response_format.is_some() {
        return None;
    }
    let callable = req.shape.choice.callable(&req.tools).ok()?;
    let offered: Vec<toolgram_core::Tool> = callable
        .iter()
        .map(|&i| req.tools.tools()[i].clone())
        .collect();
    validate::hidden_call(content?, &offered)
}

/// Whether the run stage may still change a reply its grammar made, past what the grammar
/// left to the validator: a mode that leaves the schema to the validator, calls the repeat
/// policy may leave out, a grammar tool's input check. Such a reply is streamed when the run
/// ends, never as it is decoded.
pub(crate) fn run_may_change(req: &Request) -> bool {
    let checked_input = req
        .tools
        .tools()
        .iter()
        .any(|t| t.grammar.as_ref().is_some_and(|g| g.check.is_some()));
    req.shape.mode != Mode::Grammar || Repeats::may_exclude(req) || checked_input
}

/// `req` with a call to `tool` required: the decode that replaces a reply hiding that call.
pub(crate) fn forced(req: &Request, tool: &str) -> Request {
    let mut forced = req.clone();
    forced.shape.choice = toolgram_core::ToolChoice::Named(tool.to_owned());
    forced
}

/// What the reply says of a hidden call it decoded again.
pub(crate) fn hidden_note(h: &validate::HiddenCall) -> crate::response::HiddenCallNote {
    crate::response::HiddenCallNote {
        tool: h.tool.clone(),
        form: h.form.as_str(),
    }
}

/// The names of the pool's grammar (custom) tools.
pub(crate) fn custom_names(tools: &ToolSet) -> Vec<String> {
    tools
        .tools()
        .iter()
        .filter(|t| t.grammar.is_some())
        .map(|t| t.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Repeats;
    use serde_json::json;

    fn forbidding(messages: Vec<Value>) -> Request {
        let tools = crate::tools_from_json(
            json!([{"type": "function", "function": {"name": "cd", "parameters": {"type":
                "object", "properties": {"folder": {"type": "string"}}}}}]),
            std::path::Path::new("."),
        )
        .expect("tools");
        let messages = serde_json::from_value(Value::Array(messages)).expect("messages");
        let mut req = Request::new(messages, tools);
        req.repeats = Repeats::Forbid;
        req
    }

    fn cd(folder: &str) -> ToolCall {
        ToolCall {
            id: "new".into(),
            name: "cd".into(),
            arguments: json!({ "folder": folder }),
        }
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    /// An assistant message calling `cd` into each folder, then each call's result.
    fn calls(id: &str, folders: &[&str]) -> Vec<Value> {
        let made: Vec<Value> = folders
            .iter()
            .enumerate()
            .map(|(i, f)| {
                json!({"id": format!("{id}{i}"), "type": "function", "function": {"name": "cd",
                    "arguments": json!({ "folder": f }).to_string()}})
            })
            .collect();
        let mut out = vec![json!({"role": "assistant", "tool_calls": made})];
        for i in 0..folders.len() {
            out.push(json!({"role": "tool", "tool_call_id": format!("{id}{i}"), "content": "ok"}));
        }
        out
    }

    fn excluded(messages: Vec<Vec<Value>>, call: &str) -> Vec<validate::RepeatedCall> {
        excluded_repeats(&forbidding(messages.concat()), &[cd(call)])
    }

    #[test]
    fn the_same_call_after_its_result_is_left_out() {
        let out = excluded(vec![vec![user("go")], calls("a", &["temp"])], "temp");
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].first_seen, "message 1");
        // Asked again by the user, the latest turn's call is still left out.
        let again = vec![vec![user("go")], calls("a", &["temp"]), vec![user("again")]];
        assert_eq!(excluded(again, "temp").len(), 1);
    }

    #[test]
    fn any_call_since_the_user_spoke_is_left_out_however_the_turn_was_written() {
        // Two calls in turn (or one reply's calls written as two messages): a loop.
        let turn = vec![
            vec![user("go")],
            calls("a", &["temp"]),
            calls("b", &["docs"]),
        ];
        assert_eq!(excluded(turn, "temp").len(), 1);
    }

    #[test]
    fn a_call_of_an_earlier_user_turn_with_calls_since_may_be_made_again() {
        // BFCL's answer to multi_turn_base_0: `cd temp`; a later turn's `cd ..` and a move;
        // then `cd temp` again.
        let conversation = vec![
            vec![user("go")],
            calls("a", &["temp"]),
            vec![user("move it back")],
            calls("b", &["..", "archive"]),
        ];
        assert!(excluded(conversation, "temp").is_empty());
    }
}
