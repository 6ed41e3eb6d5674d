//! Anthropic's tools and `tool_choice`, read and written. A client tool (`type` absent or
//! `custom`) is a function with its `input_schema`; a tool written is one with its schema as
//! the provider's profile rendered it. `tool_choice` is `auto`, `any`, `tool` (by name) or
//! `none`, with `disable_parallel_tool_use`. This module must not decide what happens to a
//! tool it cannot read (a hosted tool): it says `None`.

use crate::chat;
use crate::error::WireError;
use serde_json::{Map, Value, json};
use toolgram_core::define::read_tools::read_function;
use toolgram_core::{DefinitionError, Tool, ToolChoice};

/// A Messages tool item read straight into a [`Tool`] (`at`: its JSON pointer): a client tool
/// is a function with its `input_schema`; other types are read as OpenAI's shapes (clients
/// send them), else `None` — a server tool (`web_search_…`, `bash_…`).
pub fn read(t: &Value, at: &str) -> Option<Result<Tool, DefinitionError>> {
    let obj = t.as_object()?;
    match obj.get("type").and_then(Value::as_str) {
        None | Some("custom") => Some(read_function(
            obj,
            at,
            "input_schema",
            json!({"type": "object"}),
        )),
        Some(_) => chat::tools::read(t, at),
    }
}

/// A strict client tool: its name, description and `input_schema`.
pub fn write(name: &str, description: &str, schema: Value) -> Value {
    json!({"name": name, "description": description, "input_schema": schema, "strict": true})
}

/// `tool_choice` and whether several calls may be made: absent, `auto` with tools and no
/// tools at all read as Anthropic defines them.
pub fn read_choice(
    o: &Map<String, Value>,
    has_tools: bool,
) -> Result<(ToolChoice, bool), WireError> {
    let Some(v) = o.get("tool_choice").filter(|v| !v.is_null()) else {
        let choice = if has_tools {
            ToolChoice::Auto
        } else {
            ToolChoice::None
        };
        return Ok((choice, true));
    };
    let parallel = !v
        .get("disable_parallel_tool_use")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let choice = match v.get("type").and_then(Value::as_str) {
        Some("auto") if has_tools => ToolChoice::Auto,
        Some("auto" | "none") => ToolChoice::None,
        Some("any") => ToolChoice::Required,
        Some("tool") => {
            let name = v.get("name").and_then(Value::as_str).ok_or_else(|| {
                WireError::invalid("tool_choice", "a `tool` tool_choice needs `name`")
            })?;
            ToolChoice::Named(name.to_owned())
        }
        _ => {
            return Err(WireError::invalid(
                "tool_choice",
                "`tool_choice.type` must be auto, any, tool or none",
            ));
        }
    };
    Ok((choice, parallel))
}

/// `tool_choice` for a choice and whether several calls may be made. Anthropic has no
/// allowed-tools list: the caller sends the allowed subset as the tools, and `required`
/// decides between `any` and `auto`.
pub fn write_choice(choice: &ToolChoice, parallel: bool) -> Value {
    let mut v = match choice {
        ToolChoice::None => return json!({"type": "none"}),
        ToolChoice::Auto
        | ToolChoice::AllowedTools {
            required: false, ..
        } => json!({"type": "auto"}),
        ToolChoice::Required | ToolChoice::AllowedTools { required: true, .. } => {
            json!({"type": "any"})
        }
        ToolChoice::Named(n) => json!({"type": "tool", "name": n}),
    };
    v["disable_parallel_tool_use"] = json!(!parallel);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A choice written reads back as the same choice and parallelism.
    #[test]
    fn a_choice_written_reads_back_the_same() {
        for choice in [
            ToolChoice::None,
            ToolChoice::Auto,
            ToolChoice::Required,
            ToolChoice::Named("get_weather".into()),
        ] {
            for parallel in [true, false] {
                let body = json!({"tool_choice": write_choice(&choice, parallel)});
                let o = body.as_object().expect("object");
                let (read_back, p) = read_choice(o, true).expect("reads");
                assert_eq!(read_back, choice);
                // `none` carries no parallelism: it reads as Anthropic's default.
                assert_eq!(p, parallel || choice == ToolChoice::None);
            }
        }
    }

    /// A tool written with a schema reads back with that schema.
    #[test]
    fn a_tool_written_reads_back_with_its_schema() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let item = write("search", "Search the web.", schema.clone());
        let tool = read(&item, "/0").expect("a client tool").expect("reads");
        assert_eq!(tool.name, "search");
        assert_eq!(tool.parameters, schema);
        assert!(
            read(
                &json!({"type": "web_search_20250305", "name": "web_search"}),
                "/1"
            )
            .is_none()
        );
    }

    #[test]
    fn a_bad_choice_is_named() {
        let body = json!({"tool_choice": {"type": "tool"}});
        let e = read_choice(body.as_object().expect("object"), true).expect_err("refused");
        assert_eq!(e.param, "tool_choice");
    }
}
