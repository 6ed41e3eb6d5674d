//! OpenAI-style chat messages: the conversation a call continues.
//!
//! Only the shape lives here (serde in and out, content parts flattened to text); rendering
//! into a model's prompt belongs to the engine, which owns chat templates.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One message of an OpenAI chat conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Text content; content-part arrays are flattened to their text parts.
    #[serde(
        default,
        deserialize_with = "flatten_content",
        skip_serializing_if = "Option::is_none"
    )]
    pub content: Option<String>,
    /// Calls an assistant made earlier in the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<MessageToolCall>>,
    /// For `role: tool`, the id of the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Optional author or tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// An assistant's reasoning, as clients send it back (`reasoning_content`); templates
    /// that write reasoning into earlier turns read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

impl ChatMessage {
    /// A message with text content only.
    pub fn text(role: &str, content: impl Into<String>) -> Self {
        Self {
            role: role.to_owned(),
            content: Some(content.into()),
            tool_calls: None,
            tool_call_id: None,
            name: None,
            reasoning_content: None,
        }
    }
}

/// A call inside an assistant message, OpenAI shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageToolCall {
    /// Call id.
    #[serde(default)]
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// Name and JSON-string arguments.
    pub function: MessageFunction,
}

/// The function part of a [`MessageToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageFunction {
    /// Tool name.
    pub name: String,
    /// Arguments as a JSON string (OpenAI) — an object is accepted too.
    #[serde(deserialize_with = "arguments_string")]
    pub arguments: String,
}

fn function_type() -> String {
    "function".to_owned()
}

/// The `text` of each content part that has one, joined by `separator`: the one reader of
/// content parts — OpenAI's, Anthropic's blocks, Gemini's parts, the Responses API's content
/// and summaries. Parts without text (images, files) are left out; callers that must say so
/// look at the parts themselves.
pub fn parts_text(parts: &[Value], separator: &str) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    texts.join(separator)
}

fn flatten_content<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => None,
        Value::String(s) => Some(s),
        Value::Array(parts) => Some(parts_text(&parts, "")),
        other => {
            return Err(serde::de::Error::custom(format!(
                "content must be a string or an array of parts, not {other}"
            )));
        }
    })
}

fn arguments_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => s,
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_openai_conversation() {
        let msgs: Vec<ChatMessage> = serde_json::from_str(
            r#"[{"role":"user","content":[{"type":"text","text":"hi"}]},
                {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
                {"role":"tool","tool_call_id":"c1","content":"42"}]"#,
        )
        .expect("valid conversation");
        assert_eq!(msgs[0].content.as_deref(), Some("hi"));
        assert_eq!(
            msgs[1]
                .tool_calls
                .as_ref()
                .map(|c| c[0].function.arguments.as_str()),
            Some("{\"a\":1}")
        );
        assert_eq!(msgs[2].tool_call_id.as_deref(), Some("c1"));
    }
}
