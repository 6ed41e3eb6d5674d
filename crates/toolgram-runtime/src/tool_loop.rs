//! The tool loop: a request whose pool holds tools of MCP servers beside its own, run until
//! the model answers — each reply whose calls all go to a server has them run there, their
//! results appended as tool messages, and the model asked again, at most `max_steps` times;
//! the pool rebuilt only where a server's list changed. The final reply lists every call run
//! (`toolgram.steps`). Calls the front end says need the client's approval are returned
//! unrun; approved (or refused) in the next request, they run (or are answered as refused)
//! before its first turn. Every call to a server is bounded by the request's deadline. This
//! module must not decode, validate or talk to a server itself: [`crate::Runtime`] and
//! `toolgram-mcp` do.

use crate::Runtime;
use crate::check::Ready;
use crate::error::RunError;
use crate::post;
use crate::request::{Cancel, Request};
use crate::response::{FinishReason, PendingCall, Response, ToolStep};
use crate::stream::{Event, Sink, StreamState};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use toolgram_core::define::message::MessageFunction;
use toolgram_core::{ChatMessage, MessageToolCall, Tool, ToolChoice, ToolSet};
use toolgram_engine::EngineError;
use toolgram_mcp::{McpError, SourceTool, ToolSources};

/// Replies whose calls a loop runs when the front end names no bound: a task such as writing
/// a file takes one to three on the default model; a model that keeps calling is stopped
/// long before its token budget would.
pub const DEFAULT_MAX_STEPS: usize = 8;

/// Which of a loop's source tools a request may use, and which of their calls wait for the
/// client's approval: each asked of the tool as its server lists it.
pub type ToolRule<'a> = &'a (dyn Fn(&SourceTool) -> bool + Sync);

/// The source tools a request was offered, and the generation of the list they came from
/// (a loop builds its pool again once the sources are at another).
#[derive(Debug, Clone, Default)]
pub struct Offered {
    /// The sources' generation when they were read ([`ToolSources::snapshot`]).
    pub generation: u64,
    /// The tools offered.
    pub tools: Vec<SourceTool>,
}

impl Offered {
    /// The tools of `sources` that `offer` lets a request use, as last listed (no server
    /// asked: a front end may call this while reading a request).
    pub fn read(sources: &ToolSources, offer: ToolRule) -> Self {
        let (generation, all) = sources.snapshot();
        Self {
            generation,
            tools: all.into_iter().filter(|t| offer(t)).collect(),
        }
    }

    /// The offered tool named `name`.
    pub fn find(&self, name: &str) -> Option<&SourceTool> {
        self.tools.iter().find(|t| t.tool.name == name)
    }
}

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
    /// The source tools in the first turn's pool ([`Offered::read`] when the pool was built).
    pub offered: Offered,
    /// When the request's time is up: no call to a server outlasts it.
    pub deadline: Option<Instant>,
}

/// A client's answer to a call it was asked to approve: the call's id and whether it may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The call (its id in the conversation).
    pub call_id: String,
    /// Run it (`true`) or answer it as refused.
    pub approve: bool,
}

/// The error of a request stopped by its deadline or its client while a loop ran.
fn stopped() -> RunError {
    RunError::Engine(EngineError::Cancelled {
        usage: None,
        partial: String::new(),
    })
}

impl ToolLoop<'_> {
    /// Run `call` on its server (`tool`, as offered): the step, and the tool message the model
    /// is shown. A call the server refused is that call's answer; a server that failed
    /// (exited, timed out) ends the loop; a request stopped (its deadline, its client) ends
    /// it as cancelled.
    fn run_call(
        &self,
        call: &MessageToolCall,
        tool: &SourceTool,
        approved: bool,
        cancel: &Cancel,
    ) -> Result<(ToolStep, ChatMessage), RunError> {
        let left = self
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()));
        if cancel.is_cancelled() || left.is_some_and(|l| l.is_zero()) {
            return Err(stopped());
        }
        let arguments: Value =
            serde_json::from_str(&call.function.arguments).unwrap_or(Value::Null);
        let started = Instant::now();
        let (text, is_error) = match self.sources.call(&call.function.name, &arguments, left) {
            Ok(r) => (r.text, r.is_error),
            Err(McpError::Refused { message, .. }) => (message, true),
            // Listed when the pool was built, gone since: the model is told.
            Err(McpError::UnknownTool(name)) => {
                (format!("the server no longer lists `{name}`"), true)
            }
            Err(_) if cancel.is_cancelled() => return Err(stopped()),
            Err(e) => return Err(e.into()),
        };
        let step = ToolStep {
            id: call.id.clone(),
            server: tool.server.clone(),
            tool: call.function.name.clone(),
            arguments,
            result: text.clone(),
            is_error,
            approved,
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
    cut.repeated_text = None;
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

/// The request's tools without the source tools of `offered`.
fn own_tools(tools: &ToolSet, offered: &Offered) -> Vec<Tool> {
    tools
        .tools()
        .iter()
        .filter(|t| offered.find(&t.name).is_none())
        .cloned()
        .collect()
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
        let result = self.run_tool_loop(first, lp, approvals, &mut step);
        // Nothing of the last turn was sent: the stream's own end sends it whole.
        StreamState::new(sink.clone(), None, Vec::new(), false).finish(result);
    }

    /// Run `first` (a request checked with `lp.offered` in its pool) as a loop: the calls of
    /// each reply that calls only offered source tools are run, until a reply answers, calls
    /// a tool of the request's own (returned for its caller to run), calls a tool that needs
    /// approval, or `max_steps` replies had their calls run — the source calls it did not run
    /// in `pending` (said in its warnings), never among its `tool_calls`. `approvals` answer
    /// calls of the conversation (the latest that has no result yet): run or refused before
    /// the first turn. A tool choice that demands a call (`required`, a named tool) holds for
    /// the first reply only, then `auto` — as agent frameworks reset it (the OpenAI Agents
    /// SDK's `reset_tool_choice`) — else no reply could answer. `step` sees each call run, as
    /// it ends. Cancelling the request (or its deadline) stops the loop at its next turn or
    /// call.
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
        let mut offered = lp.offered.clone();
        let own = own_tools(&req.tools, &offered);
        // The last reply whose calls ran: what a reply cut after it is built from.
        let mut last: Option<Response> = None;
        if self.answer_approvals(&mut req, lp, &offered, approvals, &mut steps, step)? {
            // The conversation (and perhaps the choice) changed: checked again.
            ready = None;
        }
        let mut turn = 0;
        loop {
            if lp.sources.refresh()? != offered.generation {
                offered = Offered::read(lp.sources, lp.offer);
                let mut pool = own.clone();
                pool.extend(offered.tools.iter().map(|t| t.tool.clone()));
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
            let ours = !calls.is_empty() && calls.iter().all(|c| offered.find(&c.name).is_some());
            let asks = calls
                .iter()
                .any(|c| offered.find(&c.name).is_some_and(|t| (lp.approval)(t)));
            if !ours || asks || turn >= lp.max_steps {
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
                hold_back(&mut reply, &offered, why);
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
                let Some(tool) = offered.find(&call.function.name) else {
                    continue;
                };
                let (done, message) = lp.run_call(call, tool, false, &req.cancel)?;
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

    /// Run the approved calls, answer the refused ones as refused, before the loop's first
    /// turn; each approval names a call of the conversation (the latest with that id) that has
    /// no result yet — one already answered (an approval sent again, a history sent back) is
    /// skipped; one naming no call, or a call to a tool this request is not offered, is an
    /// invalid request. Whether any was answered.
    fn answer_approvals(
        &self,
        req: &mut Request,
        lp: &ToolLoop,
        offered: &Offered,
        approvals: &[Approval],
        steps: &mut Vec<ToolStep>,
        step: &mut dyn FnMut(&ToolStep),
    ) -> Result<bool, RunError> {
        let mut answered = false;
        for a in approvals {
            let answered_before = req
                .messages
                .iter()
                .any(|m| m.role == "tool" && m.tool_call_id.as_deref() == Some(&a.call_id));
            if answered_before {
                continue;
            }
            let call = req
                .messages
                .iter()
                .rev()
                .filter(|m| m.role == "assistant")
                .find_map(|m| m.tool_calls.iter().flatten().find(|c| c.id == a.call_id))
                .cloned()
                .ok_or_else(|| {
                    RunError::InvalidRequest(format!(
                        "approval `{}` answers no call of the conversation",
                        a.call_id
                    ))
                })?;
            let tool = offered.find(&call.function.name).ok_or_else(|| {
                RunError::InvalidRequest(format!(
                    "approval `{}`: `{}` is not a tool of this request's MCP servers",
                    a.call_id, call.function.name
                ))
            })?;
            let message = if a.approve {
                let (done, message) = lp.run_call(&call, tool, true, &req.cancel)?;
                step(&done);
                steps.push(done);
                message
            } else {
                tool_message(&call, "error: the user did not approve this call".into())
            };
            req.messages.push(message);
            answered = true;
        }
        if answered && req.shape.choice.requires_call() {
            req.shape.choice = ToolChoice::Auto;
        }
        Ok(answered)
    }
}

/// Move `reply`'s calls to offered source tools out of its `tool_calls` into `pending`
/// (with their servers), said in its warnings with `why` where it is not an approval; a
/// reply left with no calls finishes by `stop`.
fn hold_back(reply: &mut Response, offered: &Offered, why: Option<String>) {
    let (pending, own): (Vec<_>, Vec<_>) = std::mem::take(&mut reply.tool_calls)
        .into_iter()
        .partition(|c| offered.find(&c.name).is_some());
    if let Some(why) = why.filter(|_| !pending.is_empty()) {
        reply.warnings.push(format!(
            "{why}: its calls to MCP tools were not run (toolgram.pending_calls)"
        ));
    }
    if own.is_empty() && !pending.is_empty() && reply.finish_reason == FinishReason::ToolCalls {
        reply.finish_reason = FinishReason::Stop;
    }
    reply.tool_calls = own;
    reply.pending = pending
        .into_iter()
        .map(|call| PendingCall {
            server: offered
                .find(&call.name)
                .map(|t| t.server.clone())
                .unwrap_or_default(),
            call,
        })
        .collect();
}
