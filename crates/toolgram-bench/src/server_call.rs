//! `bench server-call`: one tool-call request, end to end, on the embedded engine and on
//! `llama-server`'s own tool calling (`--jinja`: its chat template, its lazy grammar) — the
//! same GGUF, threads, context size, messages, tools and `tool_choice`, in the same run.
//! Each side gets one untimed warm-up, then `runs` timed calls; every call pays its prompt
//! (a fresh session here, `cache_prompt: false` there). Reports wall-clock p50/p95 per side,
//! their ratio, and how many calls were valid.
//!
//! Measurements only; this module must not print. It starts llama-server as a child process
//! and kills it when done.

use super::child_server::{Server, http, valid, valid_reply};
use super::percentile;
use crate::BenchError;
use serde::Serialize;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_engine::gpu::GpuOptions;
use toolgram_engine::{CallGrammar, CallRequest, CallShape, Engine, EngineOptions, Sampling};
use toolgram_providers::native_chat_body;

/// What `bench server-call` runs.
pub struct ServerCallOptions<'a> {
    /// The GGUF model file, for both sides.
    pub model: &'a Path,
    /// The `llama-server` binary.
    pub server: &'a Path,
    /// CPU threads, both sides (`None`: [`toolgram_engine::default_threads`]).
    pub threads: Option<u32>,
    /// Where the layers go, both sides.
    pub gpu: &'a GpuOptions,
    /// Context size, both sides (`None`: 4096).
    pub ctx_size: Option<u32>,
    /// The conversation.
    pub messages: &'a [ChatMessage],
    /// The tools file's JSON, sent to llama-server as it is.
    pub tools_json: &'a Value,
    /// The same tools, read.
    pub tools: &'a ToolSet,
    /// The tool choice as the user spelled it (`auto`, `required`, `none` or a tool name).
    pub tool_choice: &'a str,
    /// Allow more than one call.
    pub parallel: bool,
    /// Most tokens per call.
    pub max_tokens: usize,
    /// Timed calls per side (at least one).
    pub runs: usize,
}

/// One side's timed calls.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// Which side.
    pub side: &'static str,
    /// Timed calls.
    pub runs: usize,
    /// Calls whose tool calls all validated (and that made at least one).
    pub valid_calls: usize,
    /// Median wall-clock ms.
    pub ms_p50: f64,
    /// 95th-percentile wall-clock ms.
    pub ms_p95: f64,
    /// Fastest call.
    pub ms_min: f64,
    /// The side's own account of its last call.
    pub detail: Value,
}

impl Side {
    fn new(side: &'static str, mut ms: Vec<f64>, valid_calls: usize, detail: Value) -> Self {
        ms.sort_by(f64::total_cmp);
        Self {
            side,
            runs: ms.len(),
            valid_calls,
            ms_p50: percentile(&ms, 0.5),
            ms_p95: percentile(&ms, 0.95),
            ms_min: percentile(&ms, 0.0),
            detail,
        }
    }
}

/// What `bench server-call` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ServerCallReport {
    /// The model file's name.
    pub model: Option<String>,
    /// CPU threads.
    pub threads: u32,
    /// Context size.
    pub ctx: u32,
    /// The tool choice as given.
    pub tool_choice: String,
    /// toolgram first, then llama-server.
    pub results: [Side; 2],
    /// toolgram's p50 over llama-server's.
    pub ratio_p50_toolgram_over_llama_server: f64,
}

/// Time both sides.
pub fn run(opts: &ServerCallOptions<'_>) -> Result<ServerCallReport, BenchError> {
    let runs = opts.runs.max(1);
    let threads = opts
        .threads
        .unwrap_or_else(toolgram_engine::default_threads);
    let ctx = opts.ctx_size.unwrap_or(4096);
    let ours = run_embedded(opts, threads, ctx, runs)?;
    let peer = run_server(opts, threads, ctx, runs)?;
    let ratio = ours.ms_p50 / peer.ms_p50;
    Ok(ServerCallReport {
        model: opts
            .model
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
        threads,
        ctx,
        tool_choice: opts.tool_choice.to_owned(),
        results: [ours, peer],
        ratio_p50_toolgram_over_llama_server: ratio,
    })
}

/// toolgram, embedded: a fresh session per call (no prompt reuse), the call timed.
fn run_embedded(
    opts: &ServerCallOptions<'_>,
    threads: u32,
    ctx: u32,
    runs: usize,
) -> Result<Side, BenchError> {
    let engine = Engine::load(
        opts.model,
        &EngineOptions {
            threads: Some(threads),
            n_ctx: Some(ctx),
            gpu: opts.gpu.clone(),
            ..Default::default()
        },
    )?;
    let choice = ToolChoice::from_cli(opts.tool_choice);
    let (mut ms, mut valid_calls, mut last) = (Vec::new(), 0, Value::Null);
    for i in 0..=runs {
        let mut session = engine.session()?;
        let t0 = Instant::now();
        let r = session.call(&CallRequest {
            messages: opts.messages,
            tools: opts.tools,
            grammar: CallGrammar::Shape(CallShape {
                choice: choice.clone(),
                parallel: opts.parallel,
                ..CallShape::default()
            }),
            few_shot: false,
            sampling: Sampling {
                max_tokens: opts.max_tokens,
                seed: Some(0),
                ..Sampling::default()
            },
        })?;
        if i > 0 {
            ms.push(t0.elapsed().as_secs_f64() * 1e3);
            valid_calls += usize::from(valid(opts.tools, &r.tool_calls));
            let t = &r.timings;
            last = json!({"completion_tokens": r.completion_tokens,
                "forced_tokens": t.forced_tokens, "prompt_tokens": t.prompt_evaluated,
                "prompt_ms": t.prompt_ms, "generate_ms": t.generate_ms,
                "mask_ms_total": t.mask_us.iter().map(|&u| f64::from(u)).sum::<f64>() / 1e3});
        }
    }
    Ok(Side::new(
        "toolgram (embedded, llguidance)",
        ms,
        valid_calls,
        json!({ "last": last, "offload": engine.offload().to_json() }),
    ))
}

/// llama-server's own tool calling on the same GGUF and threads.
fn run_server(
    opts: &ServerCallOptions<'_>,
    threads: u32,
    ctx: u32,
    runs: usize,
) -> Result<Side, BenchError> {
    let server = Server::llama_server(opts.server, opts.model, threads, ctx, 1, opts.gpu)?;
    let body = request_body(opts).to_string();
    let (mut ms, mut valid_calls, mut timings) = (Vec::new(), 0, Value::Null);
    for i in 0..=runs {
        let t0 = Instant::now();
        let (status, text) = http(server.port(), "POST", "/v1/chat/completions", &body)
            .map_err(|e| BenchError::Server(format!("llama-server: {e}")))?;
        let elapsed = t0.elapsed().as_secs_f64() * 1e3;
        if status != 200 {
            return Err(BenchError::Server(format!(
                "llama-server answered {status}: {text}"
            )));
        }
        let reply: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if i > 0 {
            ms.push(elapsed);
            valid_calls += usize::from(valid_reply(opts.tools, &reply));
            timings = reply["timings"].clone();
        }
    }
    Ok(Side::new(
        "llama-server --jinja (its own tool calling)",
        ms,
        valid_calls,
        json!({ "last_timings": timings }),
    ))
}

/// The chat-completions body llama-server gets: greedy, seeded, no prompt cache.
fn request_body(opts: &ServerCallOptions<'_>) -> Value {
    let mut body = native_chat_body(
        json!(opts.messages),
        opts.tools_json,
        &ToolChoice::from_cli(opts.tool_choice),
        opts.parallel,
        opts.max_tokens,
    );
    body["cache_prompt"] = json!(false);
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_percentiles_over_sorted_times() {
        let s = Side::new("x", vec![30.0, 10.0, 20.0], 2, Value::Null);
        assert_eq!((s.runs, s.valid_calls), (3, 2));
        assert_eq!((s.ms_min, s.ms_p50, s.ms_p95), (10.0, 20.0, 30.0));
    }

    #[test]
    fn a_reply_is_valid_when_it_has_calls_and_each_is_valid() {
        let tools = ToolSet::from_value(&json!([{"type": "function", "function": {"name": "f",
            "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}]))
        .expect("tools");
        let reply = |args: &str| {
            json!({"choices": [{"message": {"tool_calls": [
            {"id": "a", "function": {"name": "f", "arguments": args}}]}}]})
        };
        assert!(super::valid_reply(&tools, &reply("{\"x\": 1}")));
        assert!(!super::valid_reply(&tools, &reply("{\"x\": \"one\"}")));
        assert!(!super::valid_reply(&tools, &reply("not json")));
        assert!(!super::valid_reply(&tools, &json!({})));
    }
}
