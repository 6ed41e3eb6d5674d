//! The pool offered for one request: escape-hatch tools only when the user said one of their
//! trigger words or `tool_choice` names them. This module must not validate calls.

use crate::error::RunError;
use crate::response::FilteredTool;
use std::sync::Arc;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, validate};

/// The tools offered for `messages` under `choice`, and the names left out.
pub(crate) fn offered(
    tools: &Arc<ToolSet>,
    messages: &[ChatMessage],
    choice: &ToolChoice,
) -> Result<(Arc<ToolSet>, Vec<FilteredTool>), RunError> {
    let keep = validate::filter_pool(tools, messages, choice);
    if keep.len() == tools.tools().len() {
        return Ok((Arc::clone(tools), Vec::new()));
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
    Ok((Arc::new(tools.subset(&keep)?), out))
}
