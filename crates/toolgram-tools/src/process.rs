//! Running a child process for a tool: no shell, stdin given or closed, stdout and stderr
//! drained on their own threads (a full pipe never stalls the child), killed at the timeout,
//! output cut at the cap. It must not decide what may run; callers do.

use crate::definition::{RunContext, ToolError};
use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a finished child left.
pub(crate) struct ChildOutput {
    /// How it exited.
    pub status: ExitStatus,
    /// Standard output, cut at the cap.
    pub stdout: String,
    /// Standard error, cut at the cap.
    pub stderr: String,
    /// Whether either was cut.
    pub truncated: bool,
}

fn drain(pipe: Option<impl Read + Send + 'static>, cap: usize) -> JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut truncated = false;
        if let Some(mut pipe) = pipe {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                truncated |= n > room;
            }
        }
        (kept, truncated)
    })
}

/// Run `cmd` (named `what` in errors) with `stdin`, under `ctx`'s timeout and output cap.
pub(crate) fn run_child(
    mut cmd: Command,
    what: &str,
    stdin: Option<&[u8]>,
    ctx: &RunContext,
) -> Result<ChildOutput, ToolError> {
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ToolError::Run(format!("{what}: {e}")))?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A child that exits without reading its input is not an error here.
        let _ = pipe.write_all(bytes);
    }
    let out = drain(child.stdout.take(), ctx.max_output);
    let err = drain(child.stderr.take(), ctx.max_output);
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
        std::thread::sleep(Duration::from_millis(10));
    };
    let (out, cut_out) = out.join().unwrap_or_default();
    let (err, cut_err) = err.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(ToolError::Run(format!(
            "{what} timed out after {:?}",
            ctx.timeout
        )));
    };
    Ok(ChildOutput {
        status,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        truncated: cut_out || cut_err,
    })
}
