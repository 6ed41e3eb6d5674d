//! OpenAI's tools and `tool_choice`, read and written. Read: a function tool in Chat
//! Completions' nested shape (`{"type":"function","function":{…}}`) or the Responses API's flat
//! one (`{"type":"function","name",…}`), or a custom grammar tool, straight into a [`Tool`];
//! `tool_choice` in either API's spelling. Written: Chat's nested strict function and freeform
//! custom tool, and its `tool_choice`. This module must not decide what to do with a tool it
//! cannot read as one of these (a hosted tool): it says `None`.

use crate::error::WireError;
use serde_json::{Map, Value, json};
use toolgram_core::define::custom_tool;
use toolgram_core::define::read_tools::{read_function, read_tool};
use toolgram_core::{DefinitionError, Tool, ToolChoice};

/// A tool in either OpenAI API's shape (`at`: its JSON pointer in the request): a function
/// tool or a custom grammar tool; `None` for any other type (a hosted tool).
pub fn read(t: &Value, at: &str) -> Option<Result<Tool, DefinitionError>> {
    let obj = t.as_object()?;
    Some(match obj.get("type").and_then(Value::as_str)? {
        "function" if obj.contains_key("function") => read_tool(t, at),
        "function" => read_function(
            obj,
            at,
            "parameters",
            json!({"type": "object", "properties": {}}),
        ),
        "custom" => custom_tool::read(obj, at),
        _ => return None,
    })
}

/// A strict function tool in Chat's nested shape.
pub fn write_function(name: String, description: String, parameters: Value) -> Value {
    json!({"type": "function", "function": {"name": name, "description": description,
        "parameters": parameters, "strict": true}})
}

/// A freeform custom tool in Chat's nested shape, its grammar as Lark.
pub fn write_custom(name: String, description: String, lark: String) -> Value {
    json!({"type": "custom", "custom": {"name": name, "description": description,
        "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": lark}}}})
}

/// A request's `tool_choice` in either API's spelling: a string; `{"type":"function"|"custom",
/// …}` with the name at the top (Responses) or under `function`/`custom` (Chat);
/// `{"type":"allowed_tools", …}` with `mode` and `tools` under `allowed_tools` (Chat) or at
/// the top (Responses). Absent: `auto` with tools, `none` without.
pub fn read_choice(o: &Map<String, Value>, has_tools: bool) -> Result<ToolChoice, WireError> {
    let v = match o.get("tool_choice") {
        None | Some(Value::Null) => {
            return Ok(if has_tools {
                ToolChoice::Auto
            } else {
                ToolChoice::None
            });
        }
        Some(v) => v,
    };
    choice(v).ok_or_else(|| {
        WireError::invalid(
            "tool_choice",
            "`tool_choice` must be auto, none, required, a named tool or allowed_tools",
        )
    })
}

/// One `tool_choice` value, `None` where it is none of OpenAI's spellings.
fn choice(v: &Value) -> Option<ToolChoice> {
    let name_of = |t: &Value| {
        t.get("name")
            .or_else(|| t.get("function").and_then(|f| f.get("name")))
            .or_else(|| t.get("custom").and_then(|f| f.get("name")))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    match v {
        Value::String(s) => match s.as_str() {
            "auto" | "none" | "required" => Some(ToolChoice::from_cli(s)),
            _ => None,
        },
        Value::Object(o) => match o.get("type")?.as_str()? {
            "function" | "custom" => name_of(v).map(ToolChoice::Named),
            "allowed_tools" => {
                let a = o.get("allowed_tools").unwrap_or(v);
                let required = match a.get("mode").and_then(Value::as_str) {
                    Some("required") => true,
                    Some("auto") | None => false,
                    Some(_) => return None,
                };
                let tools = a
                    .get("tools")?
                    .as_array()?
                    .iter()
                    .map(name_of)
                    .collect::<Option<Vec<_>>>()?;
                Some(ToolChoice::AllowedTools { tools, required })
            }
            _ => None,
        },
        _ => None,
    }
}

/// Chat's `tool_choice`.
pub fn write_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Named(n) => json!({"type": "function", "function": {"name": n}}),
        ToolChoice::AllowedTools { tools, required } => json!({
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": if *required { "required" } else { "auto" },
                "tools": tools.iter().map(|n| json!({"type": "function", "function": {"name": n}})).collect::<Vec<_>>(),
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_choice_reads_chat_and_responses_spellings() {
        let named = Some(ToolChoice::Named("f".into()));
        assert_eq!(
            choice(&json!({"type": "function", "function": {"name": "f"}})),
            named
        );
        assert_eq!(choice(&json!({"type": "function", "name": "f"})), named);
        assert_eq!(
            choice(&json!({"type": "custom", "custom": {"name": "f"}})),
            named
        );
        assert_eq!(choice(&json!({"type": "custom", "name": "f"})), named);
        let allowed = Some(ToolChoice::AllowedTools {
            tools: vec!["a".into(), "b".into()],
            required: true,
        });
        let chat = json!({"type": "allowed_tools", "allowed_tools": {"mode": "required",
            "tools": [{"type": "function", "function": {"name": "a"}}, {"type": "custom", "custom": {"name": "b"}}]}});
        assert_eq!(choice(&chat), allowed);
        let responses = json!({"type": "allowed_tools", "mode": "required",
            "tools": [{"type": "function", "name": "a"}, {"type": "custom", "name": "b"}]});
        assert_eq!(choice(&responses), allowed);
        assert_eq!(choice(&json!("sometimes")), None);
        assert_eq!(
            choice(&json!({"type": "allowed_tools", "mode": "maybe", "tools": []})),
            None
        );
        assert_eq!(choice(&json!({"type": "function"})), None);
    }

    /// Every choice written reads back as itself.
    #[test]
    fn a_choice_written_reads_back_the_same() {
        for c in [
            ToolChoice::None,
            ToolChoice::Auto,
            ToolChoice::Required,
            ToolChoice::Named("get_weather".into()),
            ToolChoice::AllowedTools {
                tools: vec!["a".into(), "b".into()],
                required: false,
            },
        ] {
            let body = json!({"tool_choice": write_choice(&c)});
            assert_eq!(read_choice(body.as_object().expect("object"), true), Ok(c));
        }
    }

    /// A function tool written reads back with its schema.
    #[test]
    fn a_function_written_reads_back_with_its_schema() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let item = write_function("search".into(), "Search.".into(), schema.clone());
        let tool = read(&item, "/0").expect("a function").expect("reads");
        assert_eq!((tool.name.as_str(), &tool.parameters), ("search", &schema));
    }
}
