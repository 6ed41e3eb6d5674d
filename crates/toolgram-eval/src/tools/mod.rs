//! Grammar tools against their JSON form: for each built-in grammar tool, tasks written for
//! this eval (`tasks/<tool>.json`, compiled into the binary), each with a reference input and
//! the outcome it must produce once the tool has run — the number, the rows, the file tree
//! after a patch, the matches. A task is run with the tool as a freeform grammar tool
//! (`grammar`: the input decoded under the tool's own grammar) and as its JSON fallback function
//! `{"input": "…"}` — under strict JSON (`fallback`: that schema enforced, the text free) and in
//! json mode (`json`: call shape and name enforced, the arguments free) — the text checked
//! against the grammar after parsing with the same retries; then the call is executed and the
//! outcome compared.
//!
//! Contents:
//! - [`TaskFile`], [`Task`], [`task_file`] — the tasks of a tool, read and checked;
//! - [`Expect`] — the outcome a task must produce, and how a result is compared with it;
//! - [`Fixture`] — the workspace folder and database a task runs in;
//! - [`run_tasks`] — tasks × modes on one runtime, each run executed, scored and recorded.
//!
//! This module must not compile grammars or parse model text: the run stage and the tools'
//! own parsers do.

mod expect;
mod fixture;
mod run;
#[cfg(test)]
mod tests;

pub use expect::{Case, Expect};
pub use fixture::Fixture;
pub use run::{pending, run_tasks, tool_set};

use crate::EvalError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The tools with tasks, in the order they are reported.
pub const TOOLS: &[&str] = &[
    "math_eval",
    "sql_query",
    "apply_patch",
    "shell_constrained",
    "code_search",
    "regex_tester",
];

/// The task files, compiled in.
const FILES: &[(&str, &str)] = &[
    ("math_eval", include_str!("../../tasks/math_eval.json")),
    ("sql_query", include_str!("../../tasks/sql_query.json")),
    ("apply_patch", include_str!("../../tasks/apply_patch.json")),
    (
        "shell_constrained",
        include_str!("../../tasks/shell_constrained.json"),
    ),
    ("code_search", include_str!("../../tasks/code_search.json")),
    (
        "regex_tester",
        include_str!("../../tasks/regex_tester.json"),
    ),
];

/// The tasks of one tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    /// The tool's name.
    pub tool: String,
    /// SQL run on a fresh SQLite file the tool is built from (`sql_query`).
    #[serde(default)]
    pub database: Option<String>,
    /// Files every task of the tool starts from (path → content).
    #[serde(default)]
    pub workspace: BTreeMap<String, String>,
    /// The tasks.
    pub tasks: Vec<Task>,
}

/// One task.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Unique within the tool.
    pub id: String,
    /// What the user asks.
    pub prompt: String,
    /// Files of this task on top of the tool's workspace (shown to the model with the prompt).
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// An input in the tool's grammar that does the task (checked by the unit tests).
    pub reference: String,
    /// The outcome.
    pub expect: Expect,
}

impl Task {
    /// The user message: the prompt, then the files the model must see (an edit needs the
    /// text it edits; a search or a command needs the names of what is there).
    pub fn user_message(&self, file: &TaskFile) -> String {
        let mut msg = self.prompt.clone();
        if !self.files.is_empty() {
            msg.push_str("\n\nFiles:");
            for (path, text) in &self.files {
                msg.push_str(&format!("\n\n{path}:\n```\n{text}```"));
            }
        }
        if !file.workspace.is_empty() {
            let names: Vec<&str> = file.workspace.keys().map(String::as_str).collect();
            msg.push_str(&format!("\n\nThe workspace holds: {}.", names.join(", ")));
        }
        msg
    }
}

/// The tasks of `tool`, checked: ids unique, every task expects something.
pub fn task_file(tool: &str) -> Result<TaskFile, EvalError> {
    let (_, text) = FILES
        .iter()
        .find(|(name, _)| *name == tool)
        .ok_or_else(|| {
            EvalError::Unsupported(format!(
                "no tasks for tool `{tool}` (tools with tasks: {})",
                TOOLS.join(", ")
            ))
        })?;
    let path = PathBuf::from(format!("tasks/{tool}.json"));
    let data = |line: usize, message: String| EvalError::Data {
        file: path.clone(),
        line,
        message,
    };
    let file: TaskFile = serde_json::from_str(text).map_err(|e| data(e.line(), e.to_string()))?;
    if file.tool != tool {
        return Err(data(1, format!("names tool `{}`", file.tool)));
    }
    let mut seen = std::collections::HashSet::new();
    for t in &file.tasks {
        if !seen.insert(&t.id) {
            return Err(data(1, format!("task id `{}` twice", t.id)));
        }
        if t.expect.is_empty() {
            return Err(data(1, format!("task `{}` expects nothing", t.id)));
        }
    }
    Ok(file)
}
