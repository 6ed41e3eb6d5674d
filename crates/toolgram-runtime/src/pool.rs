//! The pool offered for one request: escape-hatch tools only when the user said one of their
//! trigger words or `tool_choice` names them. This module must not validate calls.

use crate::error::RunError;
use crate::request::Request;
use crate::response::FilteredTool;
use std::sync::Arc;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, validate};

/// The pool one request offers.
pub(crate) struct Offered {
    /// The tools offered: the pool itself, or a subset of it.
    pub tools: Arc<ToolSet>,
    /// The tools left out, each with why.
    pub out: Vec<FilteredTool>,
}

/// `req` with the pool offered for it, and the tools left out (those its front end left out
/// first); a conversation without a user message is refused.
pub(crate) fn offer(mut req: Request) -> Result<(Request, Vec<FilteredTool>), RunError> {
    if req.messages.iter().all(|m| m.role == "system") {
        return Err(RunError::InvalidRequest(
            "the conversation has no user message".into(),
        ));
    }
    let offered = offered(&req.tools, &req.messages, &req.shape.choice)?;
    let mut filtered_out = std::mem::take(&mut req.not_offered);
    filtered_out.extend(offered.out);
    req.tools = offered.tools;
    Ok((req, filtered_out))
}

/// The tools offered for `messages` under `choice`, and the names left out.
pub(crate) fn offered(
    tools: &Arc<ToolSet>,
    messages: &[ChatMessage],
    choice: &ToolChoice,
) -> Result<Offered, RunError> {
    let keep = validate::filter_pool(tools, messages, choice);
    if keep.len() == tools.tools().len() {
        return Ok(Offered {
            tools: Arc::clone(tools),
            out: Vec::new(),
        });
    }
    let out = tools
        .tools()
        .iter()
        .enumerate()
        .filter(|(i, _)| !keep.contains(i))
        .map(|(_, t)| {
            FilteredTool::new(
                t.name.clone(),
                "escape hatch: the user said none of its trigger words and tool_choice does not name it",
            )
        })
        .collect();
    Ok(Offered {
        tools: Arc::new(tools.subset(&keep)?),
        out,
    })
}
