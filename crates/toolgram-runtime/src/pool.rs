//! The pool offered for one request: escape-hatch tools only when the user said one of their
//! trigger words or `tool_choice` names them. This module must not validate calls.

use crate::error::RunError;
use crate::request::Precompiled;
use crate::response::FilteredTool;
use std::sync::Arc;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, validate};

/// The pool one request offers.
pub(crate) struct Offered {
    /// The tools offered: the pool itself, or the subset `keep`.
    pub tools: Arc<ToolSet>,
    /// Which of the pool's tools are offered.
    pub keep: Vec<usize>,
    /// The tools left out, each with why.
    pub out: Vec<FilteredTool>,
}

/// The tools offered for `messages` under `choice`, and the names left out; the subset a
/// check already made of the same pool (`checked`) is taken again, so the grammar it compiled
/// for that subset stays the run's.
pub(crate) fn offered(
    tools: &Arc<ToolSet>,
    messages: &[ChatMessage],
    choice: &ToolChoice,
    checked: Option<&Precompiled>,
) -> Result<Offered, RunError> {
    let keep = validate::filter_pool(tools, messages, choice);
    if keep.len() == tools.tools().len() {
        return Ok(Offered {
            tools: Arc::clone(tools),
            keep,
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
    let subset = match checked.filter(|c| Arc::ptr_eq(&c.pool, tools) && c.keep == keep) {
        Some(c) => Arc::clone(&c.offered),
        None => Arc::new(tools.subset(&keep)?),
    };
    Ok(Offered {
        tools: subset,
        keep,
        out,
    })
}
