//! Tool pools from JSON: function tools, grammar ("custom") tools in OpenAI's shapes,
//! toolgram's built-in grammar tools by name (`{"type": "builtin", "name": "math_eval"}`;
//! `sql_query` also takes `"db": "file.sqlite"`) and grammar tools from a manifest
//! (`{"type": "grammar_file", "path": "dice.toml"}`), each read straight into its `Tool` from
//! its one definition; paths are relative to the tools file. A call to a built-in or manifest
//! tool is also checked as its executor checks before running (`sql_query`: names against the
//! query's own tables). This module must not run tools.

use crate::error::RunError;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use toolgram_core::define::custom_tool::grammar_tool;
use toolgram_core::define::read_tools::read_tool;
use toolgram_core::{InputCheck, Tool, ToolSet};
use toolgram_tools::file_tool::FileTool;
use toolgram_tools::{BuildOptions, DynTool, ToolError, builtin};

/// One item of a tools document (`at`, its JSON pointer): a `builtin` or `grammar_file` entry
/// read into its grammar tool, its calls checked as its executor checks them; anything else
/// by core's reader.
fn read_item(item: &Value, at: &str, base: &Path) -> Result<Tool, RunError> {
    let invalid = |e: ToolError| RunError::InvalidTools(e.to_string());
    let path_of = |key: &str| item.get(key).and_then(Value::as_str).map(|p| base.join(p));
    let runnable: Arc<dyn DynTool> = match item.get("type").and_then(Value::as_str) {
        Some("builtin") => {
            let name = item.get("name").and_then(Value::as_str).unwrap_or("");
            Arc::from(builtin(name, &BuildOptions { db: path_of("db") }).map_err(invalid)?)
        }
        Some("grammar_file") => {
            let path = path_of("path").ok_or_else(|| {
                RunError::InvalidTools("a grammar_file tool needs \"path\"".into())
            })?;
            Arc::new(FileTool::load(&path).map_err(invalid)?)
        }
        _ => return Ok(read_tool(item, at)?),
    };
    let mut tool = grammar_tool(
        runnable.name().to_owned(),
        runnable.description(),
        runnable.lark_source(),
        at,
    )?;
    if let Some(grammar) = tool.grammar.as_mut() {
        grammar.check = Some(InputCheck::new(move |text| {
            runnable.check_text(text).map_err(|e| e.to_string())
        }));
    }
    Ok(tool)
}

/// Read and check a tools file.
pub fn read_tools_file(path: &Path) -> Result<ToolSet, RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Io(format!("cannot read tools file {}: {e}", path.display())))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        RunError::InvalidTools(format!(
            "{}: not JSON: {e} (line {}, column {})",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    tools_from_json(doc, path.parent().unwrap_or(Path::new(".")))
}

/// Check a tools document (an array, or `{"tools": [...]}`); `base` is where relative
/// paths of `builtin` and `grammar_file` entries start.
pub fn tools_from_json(doc: Value, base: &Path) -> Result<ToolSet, RunError> {
    ToolSet::read_document(&doc, |item, at| read_item(item, at, base))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgram_core::ToolCall;
    use toolgram_core::validate::validate_call;

    /// A built-in tool's call is checked as its executor would check it, before it runs.
    #[test]
    fn a_sql_query_call_naming_a_column_of_a_table_not_in_from_is_refused() {
        let dir = std::env::temp_dir().join(format!("toolgram-rt-tools-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let db = dir.join("shop.sqlite");
        let _ = std::fs::remove_file(&db);
        rusqlite::Connection::open(&db)
            .and_then(|c| {
                c.execute_batch(
                    "CREATE TABLE customers (id INTEGER, name TEXT);
                     CREATE TABLE orders (id INTEGER, customer_id INTEGER, total REAL);
                     CREATE TABLE notes (id INTEGER, body TEXT);",
                )
            })
            .expect("a SQLite file");
        let file = dir.join("tools.json");
        std::fs::write(
            &file,
            r#"[{"type": "builtin", "name": "sql_query", "db": "shop.sqlite"}]"#,
        )
        .expect("write");
        let tools = read_tools_file(&file).expect("reads");
        let call = |sql: &str| ToolCall {
            id: "c".into(),
            name: "sql_query".into(),
            arguments: json!({ "input": sql }),
        };
        let ok = "SELECT customers.name, SUM(orders.total) FROM customers JOIN orders \
                  ON orders.customer_id = customers.id GROUP BY customers.name";
        assert_eq!(validate_call(&tools, &call(ok)), Ok(()));
        // A query with joins may select any column in the grammar; the check ties it down.
        let bad = "SELECT SUM(total) FROM customers JOIN notes ON notes.id = customers.id";
        let err = validate_call(&tools, &call(bad)).expect_err("total is in neither table");
        assert!(
            err[0]
                .message
                .contains("column `total` is in none of the query's tables"),
            "{err:?}"
        );
    }
}
