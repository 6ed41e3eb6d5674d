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
/// of the conversation's latest turn of calls — the same call again right after its result,
/// the loop of an agent that never ends —, to a tool not marked `repeatable`. A call made
/// before that turn stays: the calls since may have moved the state it reads or changes
/// (`cd temp`, then `cd ..` and a move, then `cd temp` again is one of BFCL's multi-turn
/// answers, which a guard against every earlier call would have made unreachable).
pub(crate) fn excluded_repeats(req: &Request, calls: &[ToolCall]) -> Vec<validate::RepeatedCall> {
    if !crate::request::Repeats::may_exclude(req) {
        return Vec::new();
    }
    let Some(latest) = req.messages.iter().rposition(made_calls) else {
        return Vec::new();
    };
    repeats_of(req, &req.messages[latest..=latest], calls)
        .map(|r| validate::RepeatedCall {
            first_seen: format!("message {latest}"),
            ..r
        })
        .collect()
}

/// Whether every one of `calls` was made and answered anywhere in the conversation, under
/// [`crate::Repeats::Forbid`], to tools not marked `repeatable`: the text that hid them was
/// reporting them.
pub(crate) fn all_made_before(req: &Request, calls: &[ToolCall]) -> bool {
    crate::request::Repeats::may_exclude(req)
        && !calls.is_empty()
        && repeats_of(req, &req.messages, calls).count() == calls.len()
}

/// The calls of `calls` identical to one made in `history`, to tools not marked `repeatable`.
fn repeats_of<'r>(
    req: &'r Request,
    history: &[toolgram_core::ChatMessage],
    calls: &[ToolCall],
) -> impl Iterator<Item = validate::RepeatedCall> + 'r {
    validate::repeated_calls(history, calls)
        .into_iter()
        .filter(|r| r.first_seen.starts_with("message"))
        .filter(|r| req.tools.get(&r.tool).is_some_and(|t| !t.repeatable))
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

    fn forbidding(messages: Value) -> Request {
        let tools = crate::tools_from_json(
            json!([{"type": "function", "function": {"name": "cd", "parameters": {"type":
                "object", "properties": {"folder": {"type": "string"}}}}}]),
            std::path::Path::new("."),
        )
        .expect("tools");
        let mut req = Request::new(serde_json::from_value(messages).expect("messages"), tools);
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

    fn turn(id: &str, folder: &str) -> Value {
        let arguments = json!({ "folder": folder }).to_string();
        json!([
            {"role": "assistant", "tool_calls": [{"id": id, "type": "function",
                "function": {"name": "cd", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": id, "content": "ok"}
        ])
    }

    fn conversation(turns: &[(&str, &str)]) -> Value {
        let mut messages = vec![json!({"role": "user", "content": "go"})];
        for (id, folder) in turns {
            messages.extend(turn(id, folder).as_array().expect("a turn").iter().cloned());
        }
        Value::Array(messages)
    }

    #[test]
    fn the_same_call_right_after_its_result_is_left_out() {
        let req = forbidding(conversation(&[("1", "temp")]));
        let excluded = excluded_repeats(&req, &[cd("temp")]);
        assert_eq!(excluded.len(), 1, "{excluded:?}");
        assert_eq!(excluded[0].first_seen, "message 1");
    }

    #[test]
    fn a_call_made_before_other_calls_may_be_made_again() {
        // BFCL's answer to multi_turn_base_0: `cd temp`, later `cd ..`, then `cd temp` again.
        let req = forbidding(conversation(&[("1", "temp"), ("2", "..")]));
        assert!(excluded_repeats(&req, &[cd("temp")]).is_empty());
        // Reported all the same where a reply's text hid it.
        assert!(all_made_before(&req, &[cd("temp")]));
        assert!(!all_made_before(&req, &[cd("temp"), cd("docs")]));
    }
}
