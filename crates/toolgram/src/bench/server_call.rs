//! `toolgram bench server-call`: one tool-call request, end to end, on the embedded engine and
//! on `llama-server`'s own tool calling (`--jinja`: its chat template, its lazy grammar) — the
//! same GGUF, threads, context size, messages, tools and `tool_choice`, in the same run.
//! Each side gets one untimed warm-up, then `--runs` timed calls; every call pays its prompt
//! (a fresh session here, `cache_prompt: false` there). Reports wall-clock p50/p95 per side,
//! their ratio, and how many calls were valid. Measurements only.

use crate::call::{CallArgs, messages};
use clap::Args;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use toolgram_core::validate::validate_call;
use toolgram_core::{ToolCall, ToolChoice, ToolSet};
use toolgram_engine::{CallRequest, Engine, EngineOptions, Sampling, models};

#[derive(Args)]
pub(crate) struct ServerCallArgs {
    #[command(flatten)]
    call: Box<CallArgs>,
    /// The `llama-server` binary (`scripts/build-llama-server` prints its path).
    #[arg(long)]
    server: PathBuf,
    /// Timed calls per side.
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

/// A llama-server child, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 exchange on a new loopback connection (no client library in the timing).
fn http(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
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

fn start(server: &PathBuf, model: &str, threads: u32, ctx: u32) -> anyhow::Result<Server> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let child = Command::new(server)
        .args([
            "-m",
            model,
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .args(["-t", &threads.to_string(), "-tb", &threads.to_string()])
        .args(["-c", &ctx.to_string(), "-np", "1", "--jinja"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let server = Server { child, port };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(180) {
        if matches!(http(port, "GET", "/health", ""), Ok((200, _))) {
            return Ok(server);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    anyhow::bail!("llama-server did not become healthy in 180 s")
}

/// The calls of an OpenAI chat reply, as toolgram reads them.
fn reply_calls(reply: &Value) -> Vec<ToolCall> {
    reply["choices"][0]["message"]["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| ToolCall {
            id: c["id"].as_str().unwrap_or("").to_owned(),
            name: c["function"]["name"].as_str().unwrap_or("").to_owned(),
            arguments: c["function"]["arguments"]
                .as_str()
                .and_then(|a| serde_json::from_str(a).ok())
                .unwrap_or(Value::Null),
        })
        .collect()
}

fn valid(tools: &ToolSet, calls: &[ToolCall]) -> bool {
    !calls.is_empty() && calls.iter().all(|c| validate_call(tools, c).is_ok())
}

fn side(name: &str, ms: &mut [f64], valid: usize, extra: Value) -> Value {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    json!({"side": name, "runs": ms.len(), "valid_calls": valid,
        "ms_p50": at(0.5), "ms_p95": at(0.95), "ms_min": at(0.0), "detail": extra})
}

pub(super) fn run(args: ServerCallArgs) -> anyhow::Result<()> {
    let call = &args.call;
    let tools_doc: Value = serde_json::from_str(&std::fs::read_to_string(&call.tools)?)?;
    let tools = ToolSet::from_value(&tools_doc)?;
    let msgs = messages(call)?;
    let choice = ToolChoice::from_cli(&call.tool_choice);
    let path = models::resolve(call.model.as_deref())?;
    let threads = call
        .threads
        .unwrap_or_else(toolgram_engine::default_threads);
    let ctx = call.ctx_size.unwrap_or(4096);
    let runs = args.runs.max(1);

    // toolgram, embedded: a fresh session per call (no prompt reuse), the call timed.
    let engine = Engine::load(
        &path,
        &EngineOptions {
            threads: Some(threads),
            n_ctx: Some(ctx),
            ..Default::default()
        },
    )?;
    let mut ours = Vec::new();
    let mut ours_valid = 0;
    let mut last = Value::Null;
    for i in 0..=runs {
        let mut session = engine.session()?;
        let t0 = Instant::now();
        let r = session.call(&CallRequest {
            messages: &msgs,
            tools: &tools,
            choice: choice.clone(),
            parallel: call.parallel_tool_calls,
            mode: Default::default(),
            think: Default::default(),
            sampling: Sampling {
                max_tokens: call.max_tokens,
                seed: Some(0),
                ..Sampling::default()
            },
        })?;
        if i > 0 {
            ours.push(t0.elapsed().as_secs_f64() * 1e3);
            ours_valid += usize::from(valid(&tools, &r.tool_calls));
            let t = &r.timings;
            last = json!({"completion_tokens": r.completion_tokens,
                "forced_tokens": t.forced_tokens, "prompt_tokens": t.prompt_evaluated,
                "prompt_ms": t.prompt_ms, "generate_ms": t.generate_ms,
                "mask_ms_total": t.mask_us.iter().map(|&u| f64::from(u)).sum::<f64>() / 1e3});
        }
    }
    drop(engine);

    // llama-server's own tool calling on the same GGUF and threads.
    let server = start(&args.server, &path.to_string_lossy(), threads, ctx)?;
    let mut body = json!({"messages": msgs, "tools": tools_doc, "temperature": 0.0, "seed": 0,
        "max_tokens": call.max_tokens, "parallel_tool_calls": call.parallel_tool_calls,
        "cache_prompt": false});
    body["tool_choice"] = match &choice {
        ToolChoice::Named(name) => json!({"type": "function", "function": {"name": name}}),
        _ => json!(call.tool_choice),
    };
    let body = body.to_string();
    let mut peer = Vec::new();
    let mut peer_valid = 0;
    let mut peer_timings = Value::Null;
    for i in 0..=runs {
        let t0 = Instant::now();
        let (status, text) = http(server.port, "POST", "/v1/chat/completions", &body)?;
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        let reply: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status != 200 {
            anyhow::bail!("llama-server answered {status}: {text}");
        }
        if i > 0 {
            peer.push(ms);
            peer_valid += usize::from(valid(&tools, &reply_calls(&reply)));
            peer_timings = reply["timings"].clone();
        }
    }
    drop(server);

    let ours = side(
        "toolgram (embedded, llguidance)",
        &mut ours,
        ours_valid,
        json!({ "last": last }),
    );
    let peer = side(
        "llama-server --jinja (its own tool calling)",
        &mut peer,
        peer_valid,
        json!({ "last_timings": peer_timings }),
    );
    let ratio = ours["ms_p50"].as_f64().unwrap_or(0.0) / peer["ms_p50"].as_f64().unwrap_or(1.0);
    let report = json!({
        "model": path.file_name().map(|n| n.to_string_lossy().into_owned()),
        "threads": threads,
        "ctx": ctx,
        "tool_choice": call.tool_choice,
        "results": [ours, peer],
        "ratio_p50_toolgram_over_llama_server": ratio,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
