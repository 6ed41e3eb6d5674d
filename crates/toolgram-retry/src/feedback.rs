//! What a failed attempt looks like to the model on its next try: the reply it gave, then
//! one `role: tool` message per call saying what was wrong (or that the call was fine but
//! not run), or a `user` note when no call could be read.
//!
//! This module only writes messages and lists problems; it must not decide whether to retry.

use crate::reply::ModelReply;
use toolgram_core::define::message::MessageFunction;
use toolgram_core::validate::validate_call;
use toolgram_core::{ChatMessage, MessageToolCall, ToolChoice, ToolSet};

/// The problems of a reply: entry 0 for the reply as a whole (tool choice), then one entry
/// per call; all empty means the reply is valid.
pub fn reply_problems(
    tools: &ToolSet,
    choice: &ToolChoice,
    reply: &ModelReply,
) -> Vec<Vec<String>> {
    let mut whole = Vec::new();
    let allowed: Vec<String> = match choice.callable(tools) {
        Ok(idx) => idx.iter().map(|&i| tools.tools()[i].name.clone()).collect(),
        Err(e) => {
            whole.push(e.to_string());
            Vec::new()
        }
    };
    if choice.requires_call() && reply.tool_calls.is_empty() {
        whole.push(format!(
            "a tool call is required: call one of {}",
            allowed.join(", ")
        ));
    }
    let mut out = vec![whole];
    for call in &reply.tool_calls {
        let mut errs = Vec::new();
        if tools.position(&call.name).is_some() && !allowed.contains(&call.name) {
            errs.push(format!(
                "tool '{}' may not be called here; call one of {}",
                call.name,
                allowed.join(", ")
            ));
        } else if let Err(list) = validate_call(tools, call) {
            errs.extend(list.into_iter().map(|e| e.message));
        }
        out.push(errs);
    }
    out
}

/// The assistant turn as given, then the errors as tool messages (one per call, in order).
pub fn feedback_messages(
    attempt: usize,
    reply: &ModelReply,
    problems: &[Vec<String>],
) -> Vec<ChatMessage> {
    if reply.tool_calls.is_empty() {
        return unreadable_messages(&reply.raw, &problems.concat().join("; "));
    }
    let ids: Vec<String> = (0..reply.tool_calls.len())
        .map(|i| format!("retry{attempt}_{i}"))
        .collect();
    let mut assistant = ChatMessage::text("assistant", reply.content.clone().unwrap_or_default());
    assistant.tool_calls = Some(
        reply
            .tool_calls
            .iter()
            .zip(&ids)
            .map(|(c, id)| MessageToolCall {
                id: id.clone(),
                kind: "function".into(),
                function: MessageFunction {
                    name: c.name.clone(),
                    arguments: c.arguments.to_string(),
                },
            })
            .collect(),
    );
    let mut out = vec![assistant];
    let whole = problems.first().map(|w| w.join("; ")).unwrap_or_default();
    for (i, id) in ids.iter().enumerate() {
        let own = problems
            .get(i + 1)
            .map(|p| p.join("; "))
            .unwrap_or_default();
        let text = match (own.is_empty(), whole.is_empty()) {
            (false, _) => format!("error: {own}. Call the tool again with corrected arguments."),
            (true, false) => format!("error: {whole}."),
            (true, true) => {
                "not run: another call in this reply was invalid; repeat this call if it is still needed."
                    .to_owned()
            }
        };
        let mut msg = ChatMessage::text("tool", text);
        msg.tool_call_id = Some(id.clone());
        out.push(msg);
    }
    out
}

/// The text as given, then a user note saying why it was not a valid call.
pub(crate) fn unreadable_messages(raw: &str, message: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::text("assistant", raw.to_owned()),
        ChatMessage::text(
            "user",
            format!(
                "Your reply was not a valid tool call: {message}. Reply again with the tool call only."
            ),
        ),
    ]
}
