//! The built-in grammar tools, by name, and tools loaded from a manifest: the one place a
//! tool is looked up.

use crate::apply_patch::ApplyPatch;
use crate::code_search::CodeSearch;
use crate::definition::{DynTool, Samples, ToolError};
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

/// One built-in tool: its name, how it is built, and its sample texts.
pub struct Entry {
    /// The tool's name.
    pub name: &'static str,
    /// Build it.
    pub build: fn(&BuildOptions) -> Result<Box<dyn DynTool>, ToolError>,
    /// Texts its grammar must accept and refuse (checked for every entry by the engine's
    /// tests: llguidance, llama.cpp's grammar engine, the tool's own parser).
    pub samples: Samples,
}

/// The built-in tools: adding one is its module and one line here.
pub const BUILTINS: &[Entry] = &[
    Entry {
        name: "apply_patch",
        build: |_| Ok(Box::new(ApplyPatch)),
        samples: crate::apply_patch::SAMPLES,
    },
    Entry {
        name: "math_eval",
        build: |_| Ok(Box::new(MathEval)),
        samples: crate::math_eval::SAMPLES,
    },
    Entry {
        name: "sql_query",
        build: build_sql_query,
        samples: crate::sql_query::SAMPLES,
    },
    Entry {
        name: "shell_constrained",
        build: |_| Ok(Box::new(ShellConstrained)),
        samples: crate::shell_constrained::SAMPLES,
    },
    Entry {
        name: "code_search",
        build: |_| Ok(Box::new(CodeSearch)),
        samples: crate::code_search::SAMPLES,
    },
    Entry {
        name: "regex_tester",
        build: |_| Ok(Box::new(RegexTester)),
        samples: crate::regex_tester::SAMPLES,
    },
];

fn build_sql_query(opts: &BuildOptions) -> Result<Box<dyn DynTool>, ToolError> {
    let db = opts.db.as_deref().ok_or_else(|| {
        ToolError::Definition(
            "sql_query is generated from a SQLite database: give one (--db FILE, or \"db\" \
             in the tools file)"
                .into(),
        )
    })?;
    Ok(Box::new(SqlQuery::open(db)?))
}

/// Names of the built-in tools.
pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|e| e.name).collect()
}

/// A built-in tool by name.
pub fn builtin(name: &str, opts: &BuildOptions) -> Result<Box<dyn DynTool>, ToolError> {
    match BUILTINS.iter().find(|e| e.name == name) {
        Some(e) => (e.build)(opts),
        None => Err(ToolError::Definition(format!(
            "no built-in grammar tool `{name}`; they are: {} (or give a manifest `….toml`)",
            names().join(", ")
        ))),
    }
}

/// Build options under which every entry's samples hold: `sql_query` over a database made
/// from [`crate::sql_query::SAMPLE_SCHEMA`] in `dir`.
pub fn sample_options(dir: &Path) -> Result<BuildOptions, ToolError> {
    let db = dir.join("toolgram-samples.sqlite");
    let _ = std::fs::remove_file(&db);
    rusqlite::Connection::open(&db)
        .and_then(|c| c.execute_batch(crate::sql_query::SAMPLE_SCHEMA))
        .map_err(|e| ToolError::Definition(format!("sample database: {e}")))?;
    Ok(BuildOptions { db: Some(db) })
}

/// A built-in tool by name, or a tool from a manifest when `name` is a path ending `.toml`.
pub fn load(name: &str, opts: &BuildOptions) -> Result<Box<dyn DynTool>, ToolError> {
    if name.ends_with(".toml") {
        return Ok(Box::new(FileTool::load(Path::new(name))?));
    }
    builtin(name, opts)
}
