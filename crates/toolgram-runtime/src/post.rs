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
/// already made in the conversation, to a tool not marked `repeatable`.
pub(crate) fn excluded_repeats(req: &Request, calls: &[ToolCall]) -> Vec<validate::RepeatedCall> {
    if !crate::request::Repeats::may_exclude(req) {
        return Vec::new();
    }
    validate::repeated_calls(&req.messages, calls)
        .into_iter()
        .filter(|r| r.first_seen.starts_with("message"))
        .filter(|r| req.tools.get(&r.tool).is_some_and(|t| !t.repeatable))
        .collect()
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
