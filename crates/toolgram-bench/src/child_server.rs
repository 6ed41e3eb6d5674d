//! OpenAI-compatible servers the benchmarks start as child processes (llama-server, and
//! `toolgram serve` itself), one HTTP/1.1 exchange at a time on loopback with no client
//! library in the timing, and how a chat reply's calls are read and judged. This module must
//! not time anything: its callers do.

use crate::BenchError;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use toolgram_core::validate::validate_call;
use toolgram_core::{ToolCall, ToolSet};
use toolgram_engine::gpu::GpuOptions;
use toolgram_wire::chat::reply::read_calls;

/// toolgram's flags for where the layers go.
pub(crate) const TOOLGRAM_GPU_FLAGS: [&str; 3] = ["--gpu-layers", "--device", "--split-mode"];
/// llama-server's flags for the same, which take the same values.
pub(crate) const LLAMA_SERVER_GPU_FLAGS: [&str; 3] = ["-ngl", "-dev", "-sm"];

/// A server child on a loopback port, killed when dropped.
pub(crate) struct Server {
    child: Child,
    port: u16,
    name: &'static str,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// llama-server with its own tool calling (`--jinja`) and `lanes` slots, each slot with
    /// `ctx` tokens of context (so `-c` is `ctx × lanes`).
    pub(crate) fn llama_server(
        server: &Path,
        model: &Path,
        threads: u32,
        ctx: u32,
        lanes: u32,
        gpu: &GpuOptions,
    ) -> Result<Self, BenchError> {
        let (threads, lanes_arg) = (threads.to_string(), lanes.to_string());
        let total_ctx = (ctx * lanes.max(1)).to_string();
        let mut cmd = Command::new(server);
        cmd.arg("-m")
            .arg(model)
            .args(["-t", &threads, "-tb", &threads])
            .args(["-c", &total_ctx, "-np", &lanes_arg, "--jinja"])
            .args(gpu.cli_args(LLAMA_SERVER_GPU_FLAGS));
        Self::start(cmd, "llama-server")
    }

    /// `toolgram serve` (the binary at `toolgram`) on the embedded model at `model`, with
    /// `lanes` requests decoding at once.
    pub(crate) fn toolgram(
        toolgram: &Path,
        model: &Path,
        threads: u32,
        ctx: u32,
        lanes: u32,
        gpu: &GpuOptions,
    ) -> Result<Self, BenchError> {
        let (threads, ctx, lanes) = (threads.to_string(), ctx.to_string(), lanes.to_string());
        let mut cmd = Command::new(toolgram);
        cmd.arg("serve")
            .arg("--model")
            .arg(model)
            .args(["--threads", &threads, "--ctx-size", &ctx])
            .args(["--parallel", &lanes, "--max-sessions", &lanes])
            .args(["--max-queue", "64"])
            .args(gpu.cli_args(TOOLGRAM_GPU_FLAGS));
        Self::start(cmd, "toolgram serve")
    }

    /// Start `cmd` on a free loopback port (`--host`, `--port`) and wait (at most 180 s)
    /// until `/health` answers 200.
    fn start(mut cmd: Command, name: &'static str) -> Result<Self, BenchError> {
        let failed = |e: std::io::Error| BenchError::Server(format!("{name}: {e}"));
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(failed)?
            .port();
        let child = cmd
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(failed)?;
        let mut server = Self { child, port, name };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(180) {
            if matches!(http(port, "GET", "/health", ""), Ok((200, _))) {
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(BenchError::Server(format!("{name} exited: {status}")));
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        Err(BenchError::Server(format!(
            "{} did not become healthy in 180 s",
            server.name
        )))
    }

    /// The loopback port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The server's `/health` object (`Null` when it cannot be read).
    pub(crate) fn health(&self) -> Value {
        http(self.port, "GET", "/health", "")
            .ok()
            .and_then(|(_, body)| serde_json::from_str(&body).ok())
            .unwrap_or(Value::Null)
    }

    /// Its name in errors and reports.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }
}

/// One HTTP/1.1 exchange on a new loopback connection (no client library in the timing).
pub(crate) fn http(
    port: u16,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(600)))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut reply = String::new();
    s.read_to_string(&mut reply)?;
    let status = reply
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = reply
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

/// Whether an OpenAI chat reply holds calls and every one is valid against `tools` (its
/// calls read by toolgram-wire's Chat reader, the providers' own; arguments that are not JSON
/// make it invalid).
pub(crate) fn valid_reply(tools: &ToolSet, reply: &Value) -> bool {
    read_calls(reply).is_ok_and(|calls| valid(tools, &calls))
}

/// At least one call, and every call valid for the pool.
pub(crate) fn valid(tools: &ToolSet, calls: &[ToolCall]) -> bool {
    !calls.is_empty() && calls.iter().all(|c| validate_call(tools, c).is_ok())
}
