//! The items and events of OpenAI's hosted MCP tool, as a server that runs the loop writes
//! them: `mcp_list_tools` (a server's tools), `mcp_call` (a call run: `arguments` as a JSON
//! string, `output` or `error`), `mcp_approval_request` (a call waiting for the client), and
//! their stream events (`response.mcp_list_tools.*`, `response.mcp_call.*`,
//! `response.mcp_call_arguments.*`). Read: the client's `mcp_approval_response` items. This
//! module must not run a server or decide which calls need approval.

use crate::error::WireError;
use crate::responses::stream::{Frame, ResponseStream};
use serde_json::{Value, json};

/// One tool of an `mcp_list_tools` item.
pub struct ListedTool<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its input schema.
    pub input_schema: &'a Value,
}

/// The `mcp_list_tools` item of server `label`.
pub fn list_tools_item(id: &str, label: &str, tools: &[ListedTool]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({"name": t.name, "description": t.description,
                "input_schema": t.input_schema, "annotations": null})
        })
        .collect();
    json!({"type": "mcp_list_tools", "id": id, "server_label": label, "tools": tools,
        "error": null})
}

/// A call a server ran: what the model sent and what came back.
pub struct RanCall<'a> {
    /// The server's label.
    pub label: &'a str,
    /// The tool.
    pub name: &'a str,
    /// The arguments, as JSON text.
    pub arguments: &'a str,
    /// What the tool returned (its text).
    pub output: &'a str,
    /// The tool said it failed (`isError`) or its output broke its schema.
    pub is_error: bool,
    /// The approval request it answers, if it waited for one.
    pub approval_request_id: Option<&'a str>,
}

/// The `mcp_call` item of `call`: a failed tool's text goes in `error`, as OpenAI's
/// `mcp_tool_execution_error`.
pub fn call_item(id: &str, call: &RanCall) -> Value {
    let (output, error, status) = if call.is_error {
        (
            Value::Null,
            json!({"type": "mcp_tool_execution_error",
                "content": [{"type": "text", "text": call.output}]}),
            "failed",
        )
    } else {
        (json!(call.output), Value::Null, "completed")
    };
    json!({"type": "mcp_call", "id": id, "server_label": call.label, "name": call.name,
        "arguments": call.arguments, "output": output, "error": error, "status": status,
        "approval_request_id": call.approval_request_id})
}

/// The `mcp_approval_request` item for a call the client must approve; its id is what the
/// client's `mcp_approval_response` names.
pub fn approval_request_item(id: &str, label: &str, name: &str, arguments: &str) -> Value {
    json!({"type": "mcp_approval_request", "id": id, "server_label": label, "name": name,
        "arguments": arguments})
}

/// A client's `mcp_approval_response` item read: the request it answers and whether it
/// approves.
pub fn approval_response(item: &Value, at: &str) -> Result<(String, bool), WireError> {
    let id = item
        .get("approval_request_id")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            WireError::invalid(at, "`mcp_approval_response` needs `approval_request_id`")
        })?;
    let approve = item
        .get("approve")
        .and_then(Value::as_bool)
        .ok_or_else(|| WireError::invalid(at, "`mcp_approval_response` needs `approve`"))?;
    Ok((id.to_owned(), approve))
}

impl ResponseStream {
    /// An `mcp_list_tools` item, whole: added (its tools empty), `in_progress`, `completed`,
    /// done.
    pub fn list_tools(&mut self, item: Value) -> Vec<Frame> {
        let mut added = item.clone();
        added["tools"] = json!([]);
        self.whole_item(
            added,
            &[
                "response.mcp_list_tools.in_progress",
                "response.mcp_list_tools.completed",
            ],
            item,
        )
    }

    /// An `mcp_call` item, whole: added (no output yet), `in_progress`, its arguments as one
    /// delta and done, `completed` or `failed`, done.
    pub fn mcp_call(&mut self, item: Value) -> Vec<Frame> {
        let mut added = item.clone();
        added["arguments"] = json!("");
        added["output"] = Value::Null;
        added["error"] = Value::Null;
        added["status"] = json!("in_progress");
        let arguments = item["arguments"].clone();
        let end = if item["status"] == "failed" {
            "response.mcp_call.failed"
        } else {
            "response.mcp_call.completed"
        };
        self.item_with_events(
            added,
            vec![
                ("response.mcp_call.in_progress", json!({})),
                (
                    "response.mcp_call_arguments.delta",
                    json!({"delta": arguments}),
                ),
                (
                    "response.mcp_call_arguments.done",
                    json!({"arguments": arguments}),
                ),
                (end, json!({})),
            ],
            item,
        )
    }

    /// An item with no events of its own (`mcp_approval_request`): added, done.
    pub fn plain_item(&mut self, item: Value) -> Vec<Frame> {
        self.item_with_events(item.clone(), Vec::new(), item)
    }

    fn whole_item(&mut self, added: Value, events: &[&str], item: Value) -> Vec<Frame> {
        let events = events.iter().map(|e| (*e, json!({}))).collect();
        self.item_with_events(added, events, item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::responses::reply::Asked;

    #[test]
    fn a_call_streams_as_openai_numbers_it_and_ends_as_its_item() {
        let (mut s, _) = ResponseStream::start(&json!({}), Asked::default());
        let call = RanCall {
            label: "notes",
            name: "write_note",
            arguments: r#"{"title":"a"}"#,
            output: "saved",
            is_error: false,
            approval_request_id: None,
        };
        let frames = s.mcp_call(call_item("mcp_1", &call));
        let kinds: Vec<&str> = frames.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "response.output_item.added",
                "response.mcp_call.in_progress",
                "response.mcp_call_arguments.delta",
                "response.mcp_call_arguments.done",
                "response.mcp_call.completed",
                "response.output_item.done"
            ]
        );
        assert_eq!(frames[1].1["item_id"], "mcp_1");
        assert_eq!(frames[5].1["item"]["output"], "saved");
        assert_eq!(frames[0].1["item"]["output"], Value::Null);
        let (items, _) = s.close();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["status"], "completed");
    }

    #[test]
    fn a_failed_tool_is_an_execution_error_not_an_output() {
        let call = RanCall {
            label: "notes",
            name: "read_note",
            arguments: "{}",
            output: "no such note",
            is_error: true,
            approval_request_id: None,
        };
        let item = call_item("mcp_2", &call);
        assert_eq!(item["output"], Value::Null);
        assert_eq!(item["error"]["type"], "mcp_tool_execution_error");
        assert_eq!(item["status"], "failed");
    }

    #[test]
    fn an_approval_response_needs_its_request_and_its_answer() {
        let ok = json!({"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": true});
        assert_eq!(
            approval_response(&ok, "input[0]").expect("reads"),
            ("mcpr_1".to_owned(), true)
        );
        assert!(approval_response(&json!({"approve": true}), "input[0]").is_err());
    }
}
