//! Responses replies from a run: a run's [`Event`]s handed to toolgram-wire's
//! `responses::stream` writer (the numbered event sequence; its reply objects are
//! `responses::reply`'s, which the provider reads the API's replies with too). Pure mapping:
//! this module must not read requests, touch HTTP or spell the API's JSON itself.

use crate::mcp::McpUse;
use serde_json::Value;
use toolgram_runtime::{Call, CallKind, Event, ToolStep};
use toolgram_wire::responses::mcp::{self, ListedTool, RanCall};
use toolgram_wire::responses::stream::{Frame, ResponseStream};

/// The frames a decoded event becomes (none for the end events, which the handler answers
/// with the final object); new items get ids from `new_id(prefix)`.
pub fn event_frames(
    s: &mut ResponseStream,
    event: &Event,
    new_id: &mut dyn FnMut(&str) -> String,
) -> Vec<Frame> {
    match event {
        Event::ReasoningDelta(t) => s.reasoning(t, new_id),
        Event::ContentDelta(t) => s.text(t, new_id),
        Event::ToolCallStart {
            id, name, custom, ..
        } => s.call_start(id, name, *custom, new_id),
        Event::ToolCallDelta {
            arguments, custom, ..
        } => s.call_delta(arguments, *custom),
        Event::ToolCallEnd { .. } => s.call_end(),
        Event::ToolStep(step) => s.mcp_call(mcp_call(step, new_id)),
        Event::Retry { .. } | Event::Done(_) | Event::Failed(_) => Vec::new(),
    }
}

/// The `mcp_list_tools` item of each server `mcp` names, with the tools it was offered.
pub fn mcp_lists(mcp: &McpUse, new_id: &mut dyn FnMut(&str) -> String) -> Vec<Value> {
    mcp.servers
        .iter()
        .map(|server| {
            let tools: Vec<ListedTool> = mcp
                .offered
                .tools
                .iter()
                .filter(|t| t.server == server.name)
                .map(|t| ListedTool {
                    name: &t.tool.name,
                    description: &t.tool.description,
                    input_schema: &t.tool.parameters,
                })
                .collect();
            mcp::list_tools_item(&new_id("mcpl"), &server.name, &tools)
        })
        .collect()
}

/// The `mcp_call` item of a call a loop ran.
pub fn mcp_call(step: &ToolStep, new_id: &mut dyn FnMut(&str) -> String) -> Value {
    let arguments = step.arguments.to_string();
    let call = RanCall {
        label: &step.server,
        name: &step.tool,
        arguments: &arguments,
        output: &step.result,
        is_error: step.is_error,
        // The approval request's id is its call's.
        approval_request_id: step.approved.then_some(step.id.as_str()),
    };
    mcp::call_item(&new_id("mcp"), &call)
}

/// The `mcp_approval_request` item of a call a loop did not run (its id the call's, which the
/// client's `mcp_approval_response` names); `server` names its tool's server.
pub fn approval_request(call: &Call, server: &str) -> Value {
    let arguments = match &call.kind {
        CallKind::Function { arguments } => arguments.to_string(),
        CallKind::Custom { input } => input.clone(),
    };
    mcp::approval_request_item(&call.id, server, &call.name, &arguments)
}
