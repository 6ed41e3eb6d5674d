//! The built-in grammar tools, by name, and tools loaded from a manifest: the one place a
//! tool is looked up.

use crate::apply_patch::ApplyPatch;
use crate::code_search::CodeSearch;
use crate::definition::{DynTool, ToolError};
use crate::file_tool::FileTool;
use crate::math_eval::MathEval;
use crate::regex_tester::RegexTester;
use crate::shell_constrained::ShellConstrained;
use crate::sql_query::SqlQuery;
use std::path::{Path, PathBuf};

/// What building a tool may need.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// The SQLite database `sql_query` is generated from.
    pub db: Option<PathBuf>,
}

/// Names of the built-in tools.
pub fn names() -> &'static [&'static str] {
    &[
        "apply_patch",
        "math_eval",
        "sql_query",
        "shell_constrained",
        "code_search",
        "regex_tester",
    ]
}

/// A built-in tool by name.
pub fn builtin(name: &str, opts: &BuildOptions) -> Result<Box<dyn DynTool>, ToolError> {
    Ok(match name {
        "apply_patch" => Box::new(ApplyPatch),
        "math_eval" => Box::new(MathEval),
        "code_search" => Box::new(CodeSearch),
        "regex_tester" => Box::new(RegexTester),
        "shell_constrained" => Box::new(ShellConstrained),
        "sql_query" => {
            let db = opts.db.as_deref().ok_or_else(|| {
                ToolError::Definition(
                    "sql_query is generated from a SQLite database: give one (--db FILE, or \"db\" \
                     in the tools file)"
                        .into(),
                )
            })?;
            Box::new(SqlQuery::open(db)?)
        }
        _ => {
            return Err(ToolError::Definition(format!(
                "no built-in grammar tool `{name}`; they are: {} (or give a manifest `….toml`)",
                names().join(", ")
            )));
        }
    })
}

/// A built-in tool by name, or a tool from a manifest when `name` is a path ending `.toml`.
pub fn load(name: &str, opts: &BuildOptions) -> Result<Box<dyn DynTool>, ToolError> {
    if name.ends_with(".toml") {
        return Ok(Box::new(FileTool::load(Path::new(name))?));
    }
    builtin(name, opts)
}
