//! Reading a tools file for the CLI: function tools, grammar ("custom") tools in OpenAI's
//! shapes, and toolgram's built-in grammar tools by name (`{"type": "builtin", "name":
//! "math_eval"}`, expanded into the custom-tool shape from their one definition). Calls to
//! grammar tools are printed in OpenAI's custom-tool-call shape.

use crate::output::CliError;
use serde_json::{Value, json};
use std::path::Path;
use toolgram_core::{ToolCall, ToolSet};
use toolgram_engine::EngineError;
use toolgram_tools::{Format, builtin, names};

/// Expand `{"type":"builtin"}` entries; everything else is left for `ToolSet` to check.
fn expand(doc: Value) -> anyhow::Result<Value> {
    let expand_one = |item: Value| -> anyhow::Result<Value> {
        if item.get("type").and_then(Value::as_str) != Some("builtin") {
            return Ok(item);
        }
        let name = item.get("name").and_then(Value::as_str).unwrap_or("");
        let tool = builtin(name).ok_or_else(|| {
            CliError::new(
                "invalid_tools",
                format!(
                    "no built-in grammar tool `{name}`; they are: {}",
                    names().join(", ")
                ),
            )
        })?;
        let definition = tool
            .format(Format::Lark)
            .map_err(|e| CliError::new("internal_error", e.to_string()))?;
        Ok(
            json!({"type": "custom", "name": tool.name(), "description": tool.description(),
            "format": {"type": "grammar", "syntax": "lark", "definition": definition}}),
        )
    };
    Ok(match doc {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(expand_one)
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(mut map) => {
            if let Some(Value::Array(items)) = map.remove("tools") {
                let items = items
                    .into_iter()
                    .map(expand_one)
                    .collect::<Result<_, _>>()?;
                map.insert("tools".into(), Value::Array(items));
            }
            Value::Object(map)
        }
        other => other,
    })
}

/// Read and check a tools file.
pub fn read(path: &Path) -> anyhow::Result<ToolSet> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::new(
            "io_error",
            format!("cannot read tools file {}: {e}", path.display()),
        )
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::new(
            "invalid_tools",
            format!(
                "{}: not JSON: {e} (line {}, column {})",
                path.display(),
                e.line(),
                e.column()
            ),
        )
    })?;
    Ok(ToolSet::from_value(&expand(doc)?).map_err(EngineError::from)?)
}

/// A call as OpenAI prints it: `function` calls, or `custom` calls (raw input text) for
/// grammar tools.
pub fn call_json(call: &ToolCall, tools: &ToolSet) -> Value {
    match tools.get(&call.name).and_then(|t| t.grammar.as_ref()) {
        Some(_) => json!({"id": call.id, "type": "custom", "custom": {"name": call.name,
            "input": call.arguments.get("input").and_then(Value::as_str).unwrap_or("")}}),
        None => call.to_openai(),
    }
}
