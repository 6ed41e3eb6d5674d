//! The tool loop: a request whose pool holds tools of MCP servers beside its own, run until
//! the model answers — each reply whose calls all go to a server has them run there, their
//! results appended as tool messages, and the model asked again, at most `max_steps` times;
//! the pool rebuilt only where a server said its list changed. The final reply lists every
//! call run (`toolgram.steps`). Calls the front end says need the client's approval are
//! returned unrun; approved (or refused) in the next request, they run (or are answered as
//! refused) before its first turn. This module must not decode, validate or talk to a server
//! itself: [`crate::Runtime`] and `toolgram-mcp` do.

use crate::Runtime;
use crate::check::Ready;
use crate::error::RunError;
use crate::post;
use crate::request::Request;
use crate::response::{CallKind, FinishReason, Response, ToolStep};
use crate::stream::{Event, Sink};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use toolgram_core::define::message::MessageFunction;
use toolgram_core::{ChatMessage, MessageToolCall, Tool, ToolChoice, ToolSet};
use toolgram_mcp::{McpError, SourceTool, ToolSources};

/// Replies whose calls a loop runs when the front end names no bound: a task such as writing
/// a file takes one to three on the default model; a model that keeps calling is stopped
/// long before its token budget would.
pub const DEFAULT_MAX_STEPS: usize = 8;

/// Which of a loop's source tools a request may use, and which of their calls wait for the
/// client's approval: each asked of the tool as its server lists it.
pub type ToolRule<'a> = &'a (dyn Fn(&SourceTool) -> bool + Sync);

/// What a front end lets one request's loop do.
pub struct ToolLoop<'a> {
    /// The servers.
    pub sources: &'a ToolSources,
    /// The source tools offered to the model.
    pub offer: ToolRule<'a>,
    /// The calls returned unrun, for the client to approve (`require_approval`).
    pub approval: ToolRule<'a>,
    /// Most replies whose calls are run.
    pub max_steps: usize,
}

/// A client's answer to a call it was asked to approve: the call's id and whether it may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The call (its id in the conversation's last assistant message).
    pub call_id: String,
    /// Run it (`true`) or answer it as refused.
    pub approve: bool,
}

impl ToolLoop<'_> {
    /// The source tools this request is offered.
    pub fn offered(&self) -> Result<Vec<SourceTool>, McpError> {
        Ok(self
            .sources
            .tools()?
            .into_iter()
            .filter(|t| (self.offer)(t))
            .collect())
    }

    /// The offered source tool named `tool` (a call the loop runs), if it is one.
    pub fn runs(&self, tool: &str) -> Option<SourceTool> {
        self.sources.find(tool).filter(|t| (self.offer)(t))
    }

    /// Run `call` on its server: the step, and the tool message the model is shown. A call
    /// the server refused is that call's answer; a server that failed (exited, timed out)
    /// ends the loop.
    fn run_call(&self, call: &MessageToolCall) -> Result<(ToolStep, ChatMessage), RunError> {
        let arguments: Value =
            serde_json::from_str(&call.function.arguments).unwrap_or(Value::Null);
        let started = Instant::now();
        let (text, is_error) = match self.sources.call(&call.function.name, &arguments) {
            Ok(r) => (r.text, r.is_error),
            Err(McpError::Refused { message, .. }) => (message, true),
            Err(e) => return Err(e.into()),
        };
        let server = self
            .sources
            .find(&call.function.name)
            .map(|t| t.server)
            .unwrap_or_default();
        let step = ToolStep {
            id: call.id.clone(),
            server,
            tool: call.function.name.clone(),
            arguments,
            result: text.clone(),
            is_error,
            ms: started.elapsed().as_secs_f64() * 1e3,
        };
        let message = tool_message(
            call,
            if is_error {
                format!("error: {text}")
            } else {
                text
            },
        );
        Ok((step, message))
    }
}

/// The events a finished reply streams as, whole: its reasoning, its text, each call.
fn reply_events(r: &Response) -> Vec<Event> {
    let mut events = Vec::new();
    if let Some(t) = r.reasoning.clone().filter(|t| !t.is_empty()) {
        events.push(Event::ReasoningDelta(t));
    }
    if let Some(t) = r.content.clone().filter(|t| !t.is_empty()) {
        events.push(Event::ContentDelta(t));
    }
    for (index, c) in r.tool_calls.iter().enumerate() {
        let (arguments, custom) = match &c.kind {
            CallKind::Function { arguments } => (arguments.to_string(), false),
            CallKind::Custom { input } => (input.clone(), true),
        };
        events.push(Event::ToolCallStart {
            index,
            id: c.id.clone(),
            name: c.name.clone(),
            custom,
        });
        events.push(Event::ToolCallDelta {
            index,
            arguments,
            custom,
        });
        events.push(Event::ToolCallEnd { index });
    }
    events
}

/// The reply of a loop whose reply after its `steps` was cut by its token limit (`e`): no
/// text, no calls, finished by `length`, the steps and messages it added, said in warnings;
/// built on `before`, the last reply whose calls ran (where it ran, on which model).
fn cut_after_steps(
    before: Response,
    e: RunError,
    steps: Vec<ToolStep>,
    loop_messages: Vec<ChatMessage>,
) -> Response {
    let mut cut = before;
    cut.content = None;
    cut.reasoning = None;
    cut.tool_calls.clear();
    cut.finish_reason = FinishReason::Length;
    cut.usage = e.usage();
    cut.warnings.push(format!(
        "the reply after the loop's last step was cut by its token limit: {e}"
    ));
    cut.steps = steps;
    cut.loop_messages = loop_messages;
    cut
}

fn tool_message(call: &MessageToolCall, text: String) -> ChatMessage {
    let mut message = ChatMessage::text("tool", text);
    message.tool_call_id = Some(call.id.clone());
    message.name = Some(call.function.name.clone());
    message
}

impl Runtime {
    /// [`Self::run_tool_loop`], streamed to `sink`: an [`Event::ToolStep`] as each call
    /// ends, then the final reply's events (whole: a turn may turn out to call a server, so
    /// none is sent before it ends) and [`Event::Done`], or [`Event::Failed`].
    pub fn stream_tool_loop(
        &self,
        first: Ready,
        lp: &ToolLoop,
        approvals: &[Approval],
        sink: &Sink,
    ) {
        let mut step = |s: &ToolStep| sink.send(Event::ToolStep(Box::new(s.clone())));
        match self.run_tool_loop(first, lp, approvals, &mut step) {
            Ok(r) => {
                for e in reply_events(&r) {
                    sink.send(e);
                }
                sink.send(Event::Done(Box::new(r)));
            }
            Err(e) => sink.send(Event::Failed(e)),
        }
    }

    /// Run `first` (a request checked with the offered source tools in its pool) as a loop:
    /// the calls of each reply that calls only offered source tools are run, until a reply
    /// answers, calls a tool of the request's own (returned for its caller to run), calls a
    /// tool that needs approval (returned unrun), or `max_steps` replies had their calls run
    /// (the last returned with its calls unrun, said in its warnings). `approvals` answer the
    /// calls of the conversation's last assistant message, run or refused before the first
    /// turn. A tool choice that demands a call (`required`, a named tool) holds for the first
    /// reply only, then `auto` — as agent frameworks reset it (the OpenAI Agents SDK's
    /// `reset_tool_choice`) — else no reply could answer. `step` sees each call run, as it
    /// ends. Cancelling the request stops the loop at its next turn.
    pub fn run_tool_loop(
        &self,
        first: Ready,
        lp: &ToolLoop,
        approvals: &[Approval],
        step: &mut dyn FnMut(&ToolStep),
    ) -> Result<Response, RunError> {
        let mut req: Request = first.request().clone();
        let asked = req.messages.len();
        let mut steps = Vec::new();
        let mut ready = Some(first);
        let own: Vec<Tool> = req
            .tools
            .tools()
            .iter()
            .filter(|t| lp.runs(&t.name).is_none())
            .cloned()
            .collect();
        let mut generation = lp.sources.generation();
        // The last reply whose calls ran: what a reply cut after it is built from.
        let mut last: Option<Response> = None;
        self.answer_approvals(&mut req, lp, approvals, &mut steps, step)?;
        let mut turn = 0;
        loop {
            if lp.sources.generation() != generation {
                generation = lp.sources.generation();
                let mut pool = own.clone();
                pool.extend(lp.offered()?.into_iter().map(|t| t.tool));
                req.tools = Arc::new(
                    ToolSet::new(pool).map_err(|e| RunError::InvalidTools(e.to_string()))?,
                );
                ready = None;
            }
            let checked = match ready.take() {
                Some(r) => r,
                None => self.ready(req.clone())?,
            };
            let mut reply = match (self.run(&checked), last.take()) {
                (Ok(reply), _) => reply,
                // A reply cut by its token limit after calls ran: the calls happened (a file
                // was written), so the reply says so rather than failing without them.
                (Err(e), Some(before)) if e.kind() == "truncated" => {
                    return Ok(cut_after_steps(
                        before,
                        e,
                        steps,
                        req.messages.split_off(asked),
                    ));
                }
                (Err(e), _) => return Err(e),
            };
            let calls = post::core_calls(&reply.tool_calls);
            let ours = !calls.is_empty() && calls.iter().all(|c| lp.runs(&c.name).is_some());
            let asks = calls
                .iter()
                .any(|c| lp.runs(&c.name).is_some_and(|t| (lp.approval)(&t)));
            if !ours || asks || turn >= lp.max_steps {
                let (pending, own): (Vec<_>, Vec<_>) = std::mem::take(&mut reply.tool_calls)
                    .into_iter()
                    .partition(|c| lp.runs(&c.name).is_some());
                let why = if asks {
                    None
                } else if ours {
                    Some(format!(
                        "the tool loop stopped after {} replies whose calls it ran (--max-steps)",
                        lp.max_steps
                    ))
                } else {
                    Some("the reply also called the request's own tools".to_owned())
                };
                if let Some(why) = why.filter(|_| !pending.is_empty()) {
                    reply.warnings.push(format!(
                        "{why}: its calls to MCP tools were not run (toolgram.pending_calls)"
                    ));
                }
                reply.tool_calls = own;
                reply.pending = pending;
                reply.steps = steps;
                reply.loop_messages = req.messages.split_off(asked);
                return Ok(reply);
            }
            let mut assistant =
                ChatMessage::text("assistant", reply.content.clone().unwrap_or_default());
            let made: Vec<MessageToolCall> = calls
                .iter()
                .map(|c| MessageToolCall {
                    id: c.id.clone(),
                    kind: "function".into(),
                    function: MessageFunction {
                        name: c.name.clone(),
                        arguments: c.arguments.to_string(),
                    },
                })
                .collect();
            assistant.tool_calls = Some(made.clone());
            last = Some(reply);
            req.messages.push(assistant);
            for call in &made {
                let (done, message) = lp.run_call(call)?;
                step(&done);
                steps.push(done);
                req.messages.push(message);
            }
            if req.shape.choice.requires_call() {
                req.shape.choice = ToolChoice::Auto;
            }
            turn += 1;
        }
    }

    /// Run the approved calls of the conversation's last assistant message, answer the
    /// refused ones as refused, before the loop's first turn; an approval naming no call there
    /// is an invalid request.
    fn answer_approvals(
        &self,
        req: &mut Request,
        lp: &ToolLoop,
        approvals: &[Approval],
        steps: &mut Vec<ToolStep>,
        step: &mut dyn FnMut(&ToolStep),
    ) -> Result<(), RunError> {
        if approvals.is_empty() {
            return Ok(());
        }
        let calls = req
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "assistant")
            .and_then(|m| m.tool_calls.clone())
            .unwrap_or_default();
        for a in approvals {
            let call = calls.iter().find(|c| c.id == a.call_id).ok_or_else(|| {
                RunError::InvalidRequest(format!(
                    "approval `{}` answers no call of the conversation's last reply",
                    a.call_id
                ))
            })?;
            if lp.runs(&call.function.name).is_none() {
                return Err(RunError::InvalidRequest(format!(
                    "approval `{}`: `{}` is not a tool of this request's MCP servers",
                    a.call_id, call.function.name
                )));
            }
            let message = if a.approve {
                let (done, message) = lp.run_call(call)?;
                step(&done);
                steps.push(done);
                message
            } else {
                tool_message(call, "error: the user did not approve this call".into())
            };
            req.messages.push(message);
        }
        if req.shape.choice.requires_call() {
            req.shape.choice = ToolChoice::Auto;
        }
        Ok(())
    }
}
