//! Where a task runs: a scratch folder per tool (removed when dropped) holding the SQLite file
//! built from the task file's SQL, and a fresh workspace folder per task run (the tool's files
//! plus the task's own), so one run's patch never leaks into the next.
//!
//! This module must not run tools or models.

use super::{Task, TaskFile};
use crate::EvalError;
use std::path::{Path, PathBuf};

/// The scratch folder of one tool's tasks.
#[derive(Debug)]
pub struct Fixture {
    dir: PathBuf,
    db: Option<PathBuf>,
}

impl Fixture {
    /// A fresh scratch folder for `file`'s tasks, with its database built.
    pub fn new(file: &TaskFile) -> Result<Self, EvalError> {
        let dir = std::env::temp_dir().join(format!(
            "toolgram-eval-{}-{}-{}",
            file.tool,
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).map_err(|e| EvalError::io(&dir, e))?;
        let mut fixture = Self { dir, db: None };
        if let Some(sql) = &file.database {
            let db = fixture.dir.join("db.sqlite");
            rusqlite::Connection::open(&db)
                .and_then(|c| c.execute_batch(sql))
                .map_err(|e| EvalError::Data {
                    file: PathBuf::from(format!("tasks/{}.json", file.tool)),
                    line: 1,
                    message: format!("database: {e}"),
                })?;
            fixture.db = Some(db);
        }
        Ok(fixture)
    }

    /// The database, when the tool has one.
    pub fn db(&self) -> Option<&Path> {
        self.db.as_deref()
    }

    /// A fresh workspace for one run of `task` (`label` tells runs apart).
    pub fn workspace(
        &self,
        file: &TaskFile,
        task: &Task,
        label: &str,
    ) -> Result<PathBuf, EvalError> {
        let root = self.dir.join(format!("{}-{label}", task.id));
        if root.exists() {
            std::fs::remove_dir_all(&root).map_err(|e| EvalError::io(&root, e))?;
        }
        std::fs::create_dir_all(&root).map_err(|e| EvalError::io(&root, e))?;
        for (path, text) in file.workspace.iter().chain(&task.files) {
            let at = root.join(path);
            if let Some(parent) = at.parent() {
                std::fs::create_dir_all(parent).map_err(|e| EvalError::io(parent, e))?;
            }
            std::fs::write(&at, text).map_err(|e| EvalError::io(&at, e))?;
        }
        Ok(root)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
