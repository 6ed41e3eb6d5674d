//! Running a parsed command: no shell; the working directory is the root; every path operand
//! must resolve (symlinks followed) inside the root; the child is killed at the timeout and
//! its output cut at the cap.

use super::Command;
use crate::definition::{RunContext, ToolError};
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

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

fn cut(bytes: &[u8], cap: usize) -> (String, bool) {
    let truncated = bytes.len() > cap;
    let end = bytes.len().min(cap);
    (
        String::from_utf8_lossy(&bytes[..end]).into_owned(),
        truncated,
    )
}

/// Run `c` under `ctx`.
pub fn run(c: &Command, ctx: &RunContext) -> Result<Value, ToolError> {
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
    let mut child = std::process::Command::new(&c.program)
        .args(&args)
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ToolError::Run(format!("{}: {e}", c.program)))?;
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child
            .try_wait()
            .map_err(|e| ToolError::Run(e.to_string()))?
        {
            break Some(s);
        }
        if started.elapsed() > ctx.timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_end(&mut out);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_end(&mut err);
    }
    let Some(status) = status else {
        return Err(ToolError::Run(format!(
            "{} timed out after {:?}",
            c.program, ctx.timeout
        )));
    };
    let (stdout, cut_out) = cut(&out, ctx.max_output);
    let (stderr, cut_err) = cut(&err, ctx.max_output);
    Ok(
        json!({"exit_code": status.code(), "stdout": stdout, "stderr": stderr,
        "truncated": cut_out || cut_err}),
    )
}
