//! Running a parsed command: no shell; the working directory is the root; every path operand
//! must resolve (symlinks followed) inside the root; the child is killed at the timeout and
//! its output cut at the cap (`crate::process`).

use super::Command;
use crate::definition::{RunContext, ToolError};
use crate::process::run_child;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// `rel` inside `root`, or why not.
fn inside(root: &Path, rel: &str) -> Result<PathBuf, ToolError> {
    let joined = root.join(rel);
    let real = joined
        .canonicalize()
        .map_err(|e| ToolError::Input(format!("{rel}: {e}")))?;
    if !real.starts_with(root) {
        return Err(ToolError::Input(format!(
            "{rel} is outside the workspace root"
        )));
    }
    Ok(real)
}

/// Run `c` under `ctx`.
pub(super) fn run(c: &Command, ctx: &RunContext) -> Result<Value, ToolError> {
    let root = ctx
        .root
        .as_ref()
        .ok_or_else(|| {
            ToolError::Input("shell_constrained needs a workspace root (--root)".into())
        })?
        .canonicalize()
        .map_err(|e| ToolError::Input(format!("workspace root: {e}")))?;
    let paths_from = usize::from(c.program == "grep");
    for p in c.operands.iter().skip(paths_from) {
        inside(&root, p)?;
    }
    let mut args: Vec<String> = Vec::new();
    let push_opts = |args: &mut Vec<String>| {
        for o in &c.options {
            args.push(o.flag.clone());
            args.extend(o.value.clone());
        }
    };
    if c.program == "find" {
        args.extend(c.operands.iter().cloned());
        push_opts(&mut args);
    } else {
        push_opts(&mut args);
        if c.program == "grep" {
            // The pattern is data, never an option.
            args.push("--".into());
        }
        args.extend(c.operands.iter().cloned());
    }
    let mut cmd = std::process::Command::new(&c.program);
    cmd.args(&args).current_dir(&root);
    let out = run_child(cmd, &c.program, None, ctx)?;
    Ok(
        json!({"exit_code": out.status.code(), "stdout": out.stdout, "stderr": out.stderr,
        "truncated": out.truncated}),
    )
}
