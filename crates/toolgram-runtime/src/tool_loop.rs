//! The tool loop: a request whose pool holds the tools of MCP servers beside its own, run
//! until the model answers — each reply whose calls all go to a server has them run there,
//! their results appended as tool messages, and the model asked again, at most `max_steps`
//! times; the tool list read again where a server said it changed. The final reply lists
//! every call run (`toolgram.steps`). This module must not decode, validate or talk to a
//! server itself: [`crate::Runtime`] and `toolgram-mcp` do.

use crate::Runtime;
use crate::error::RunError;
use crate::post;
use crate::request::Request;
use crate::response::{Response, ToolStep};
use std::sync::Arc;
use std::time::Instant;
use toolgram_core::define::message::MessageFunction;
use toolgram_core::{ChatMessage, MessageToolCall, ToolChoice, ToolSet};
use toolgram_mcp::{McpError, ToolSources};

/// Replies whose calls a loop runs when the front end names no bound: a task such as writing
/// a file takes one to three on the default model; a model that keeps calling is stopped
/// long before its token budget would.
pub const DEFAULT_MAX_STEPS: usize = 8;

impl Runtime {
    /// Run `req` with the tools `sources` list offered beside its own, running the calls of
    /// each reply that calls only their tools, until a reply answers, calls a tool of the
    /// request's own (returned for its caller to run), or `max_steps` replies had their calls
    /// run (the last reply returned with its calls unrun, said in its warnings). A tool choice
    /// that demands a call (`required`, a named tool) holds for the first reply only, then
    /// `auto` — as agent frameworks reset it (the OpenAI Agents SDK's `reset_tool_choice`) —
    /// else no reply could answer. `step` sees each call run, as it ends.
    pub fn run_tool_loop(
        &self,
        mut req: Request,
        sources: &mut ToolSources,
        max_steps: usize,
        step: &mut dyn FnMut(&ToolStep),
    ) -> Result<Response, RunError> {
        let own = Arc::clone(&req.tools);
        let mut steps = Vec::new();
        let mut turn = 0;
        loop {
            let mut pool = own.tools().to_vec();
            pool.extend(sources.tools()?);
            req.tools =
                Arc::new(ToolSet::new(pool).map_err(|e| RunError::InvalidTools(e.to_string()))?);
            let mut reply = self.run(&self.ready(req.clone())?)?;
            let calls = post::core_calls(&reply.tool_calls);
            let ours = !calls.is_empty() && calls.iter().all(|c| sources.lists(&c.name));
            if !ours || turn >= max_steps {
                if ours {
                    reply.warnings.push(format!(
                        "the tool loop stopped after {max_steps} replies whose calls it ran (--max-steps): this reply's calls were not run"
                    ));
                }
                reply.steps = steps;
                return Ok(reply);
            }
            let mut assistant = ChatMessage::text("assistant", reply.content.unwrap_or_default());
            assistant.tool_calls = Some(
                calls
                    .iter()
                    .map(|c| MessageToolCall {
                        id: c.id.clone(),
                        kind: "function".into(),
                        function: MessageFunction {
                            name: c.name.clone(),
                            arguments: c.arguments.to_string(),
                        },
                    })
                    .collect(),
            );
            req.messages.push(assistant);
            for call in &calls {
                let started = Instant::now();
                // A call the server refused is that call's answer; a server that failed
                // (exited, timed out) ends the loop.
                let (text, is_error) = match sources.call(&call.name, &call.arguments) {
                    Ok(r) => (r.text, r.is_error),
                    Err(McpError::Refused { message, .. }) => (message, true),
                    Err(e) => return Err(e.into()),
                };
                let done = ToolStep {
                    server: sources.server_of(&call.name).unwrap_or_default().to_owned(),
                    tool: call.name.clone(),
                    arguments: call.arguments.clone(),
                    result: text.clone(),
                    is_error,
                    ms: started.elapsed().as_secs_f64() * 1e3,
                };
                step(&done);
                steps.push(done);
                let text = if is_error {
                    format!("error: {text}")
                } else {
                    text
                };
                let mut message = ChatMessage::text("tool", text);
                message.tool_call_id = Some(call.id.clone());
                message.name = Some(call.name.clone());
                req.messages.push(message);
            }
            if req.shape.choice.requires_call() {
                req.shape.choice = ToolChoice::Auto;
            }
            turn += 1;
        }
    }
}
