//! Reading a tools file for the CLI: function tools, grammar ("custom") tools in OpenAI's
//! shapes, toolgram's built-in grammar tools by name (`{"type": "builtin", "name":
//! "math_eval"}`; `sql_query` also takes `"db": "file.sqlite"`) and grammar tools from a
//! manifest (`{"type": "grammar_file", "path": "dice.toml"}`), both expanded into the
//! custom-tool shape from their one definition; paths are relative to the tools file. Calls
//! to grammar tools are printed in OpenAI's custom-tool-call shape.

use crate::output::CliError;
use serde_json::{Value, json};
use std::path::Path;
use toolgram_core::{ToolCall, ToolSet};
use toolgram_engine::EngineError;
use toolgram_tools::file_tool::FileTool;
use toolgram_tools::{BuildOptions, ToolError, builtin};

/// Expand `builtin` and `grammar_file` entries; everything else is left for `ToolSet` to check.
fn expand(doc: Value, base: &Path) -> anyhow::Result<Value> {
    let invalid = |e: ToolError| CliError::new("invalid_tools", e.to_string());
    let expand_one = |item: Value| -> anyhow::Result<Value> {
        let path_of = |key: &str| item.get(key).and_then(Value::as_str).map(|p| base.join(p));
        let tool = match item.get("type").and_then(Value::as_str) {
            Some("builtin") => {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                builtin(name, &BuildOptions { db: path_of("db") }).map_err(invalid)?
            }
            Some("grammar_file") => {
                let path = path_of("path").ok_or_else(|| {
                    CliError::new("invalid_tools", "a grammar_file tool needs \"path\"")
                })?;
                Box::new(FileTool::load(&path).map_err(invalid)?)
            }
            _ => return Ok(item),
        };
        let definition = tool.lark_source();
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
    let base = path.parent().unwrap_or(Path::new("."));
    Ok(ToolSet::from_value(&expand(doc, base)?).map_err(EngineError::from)?)
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
