//! A `tools/call` result as the model gets it: its content blocks as text, `isError`, and
//! `structuredContent` checked against the tool's `outputSchema`. This module must not talk to
//! a server.

use serde_json::Value;

/// What one call of an MCP tool gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The text the model is shown: the result's text blocks joined, other blocks named by
    /// their type; the structured content as JSON where no text came with it.
    pub text: String,
    /// The server said the call failed (`isError`), or its structured content broke the
    /// tool's `outputSchema` (said in `text`): the model sees it as an error to act on.
    pub is_error: bool,
    /// The result's `structuredContent`, where given.
    pub structured: Option<Value>,
}

impl ToolResult {
    /// Read a `tools/call` result (as its JSON), its structured content checked by `output`
    /// (the tool's `outputSchema`) where the tool has one.
    pub(crate) fn read(result: &Value, output: Option<&jsonschema::Validator>) -> Self {
        let blocks = result
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut text: Vec<String> = blocks
            .iter()
            .map(|b| match b.get("text").and_then(Value::as_str) {
                Some(t) => t.to_owned(),
                None => format!(
                    "[{} content]",
                    b.get("type").and_then(Value::as_str).unwrap_or("unknown")
                ),
            })
            .collect();
        let structured = result.get("structuredContent").cloned();
        if text.is_empty()
            && let Some(s) = &structured
        {
            text.push(s.to_string());
        }
        let mut is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        if let (Some(schema), false) = (output, is_error) {
            let broken = match &structured {
                None => Some("the tool has an outputSchema but its result has no structuredContent".to_owned()),
                Some(s) => schema.iter_errors(s).next().map(|e| {
                    format!("the result's structuredContent does not match the tool's outputSchema at `{}`: {e}", e.instance_path)
                }),
            };
            if let Some(why) = broken {
                is_error = true;
                text.push(why);
            }
        }
        Self {
            text: text.join("\n"),
            is_error,
            structured,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_blocks_are_joined_and_an_output_schema_is_checked() {
        let ok = ToolResult::read(
            &json!({"content": [{"type": "text", "text": "18 C"}, {"type": "image"}]}),
            None,
        );
        assert_eq!(ok.text, "18 C\n[image content]");
        assert!(!ok.is_error);
        let schema = jsonschema::validator_for(&json!({"type": "object", "required": ["c"]}))
            .expect("a schema");
        let broken = ToolResult::read(&json!({"structuredContent": {"f": 64}}), Some(&schema));
        assert!(broken.is_error);
        assert!(broken.text.contains("outputSchema"), "{}", broken.text);
        let kept = ToolResult::read(&json!({"structuredContent": {"c": 18}}), Some(&schema));
        assert!(!kept.is_error);
        assert_eq!(kept.text, r#"{"c":18}"#);
        let failed = ToolResult::read(
            &json!({"content": [{"type": "text", "text": "no such city"}], "isError": true}),
            Some(&schema),
        );
        assert!(failed.is_error);
        assert_eq!(failed.text, "no such city");
    }
}
