//! The blocks of Anthropic's MCP connector (beta `mcp-client-2025-11-20`), as a server that
//! runs the loop writes them: `mcp_tool_use` (a call, with its server's name) and
//! `mcp_tool_result` (what came back, `is_error`). Read back: `messages` takes both
//! ([`crate::anthropic::messages`]). This module must not run a server.

use serde_json::{Value, json};

/// The `mcp_tool_use` block of call `id` to `name` on `server`.
pub fn tool_use_block(id: &str, server: &str, name: &str, input: &Value) -> Value {
    json!({"type": "mcp_tool_use", "id": id, "name": name, "server_name": server,
        "input": input})
}

/// The `mcp_tool_result` block answering call `id`.
pub fn tool_result_block(id: &str, text: &str, is_error: bool) -> Value {
    json!({"type": "mcp_tool_result", "tool_use_id": id, "is_error": is_error,
        "content": [{"type": "text", "text": text}]})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::messages;

    /// A reply's MCP blocks sent back in the next request read as the call, its result and
    /// the text after them.
    #[test]
    fn blocks_sent_back_read_as_the_turns_they_were() {
        let body = json!({"messages": [
            {"role": "user", "content": "write it"},
            {"role": "assistant", "content": [
                tool_use_block("mcptoolu_1", "notes", "write_note", &json!({"title": "a"})),
                tool_result_block("mcptoolu_1", "saved", false),
                {"type": "text", "text": "Done."}]},
            {"role": "user", "content": "thanks"}]});
        let mut notes = Vec::new();
        let m = messages::read(body.as_object().expect("object"), &mut notes).expect("reads");
        let roles: Vec<&str> = m.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            ["user", "assistant", "tool", "assistant", "user"],
            "{m:?}"
        );
        assert_eq!(
            m[1].tool_calls.as_ref().expect("a call")[0].function.name,
            "write_note"
        );
        assert_eq!(m[2].tool_call_id.as_deref(), Some("mcptoolu_1"));
        assert_eq!(m[2].content.as_deref(), Some("saved"));
        assert_eq!(m[3].content.as_deref(), Some("Done."));
        assert!(notes.is_empty(), "{notes:?}");
    }
}
