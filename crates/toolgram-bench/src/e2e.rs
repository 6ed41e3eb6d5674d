//! `bench e2e`: a tool call end to end, in one run on one GGUF, threads and context —
//! (a) toolgram constrained and (b) unconstrained on the same prompt, the tools already cached
//! by an earlier request with another user message (in-process engine), so the user's turn is
//! evaluated as in a new turn of an agent; (c) llama-server's own `--jinja` tool calling, its
//! prompt cache warmed the same way;
//! (d) a one-shot `toolgram call` process, cold and again with the persistent prefix cache;
//! (e) concurrent clients ([`super::concurrent`]). Per request: prompt tokens evaluated and
//! cached, sampled and forced tokens, mask µs p50/p99, decode ms per step, end-to-end ms, valid
//! call, whether the fast-forwarded reply is byte-identical to sampling every token, where the
//! time went (grammar, template, prefill, decode, masks, the rest), and the request's
//! **limit**: what llama.cpp alone needs for the same work — every token the request had to
//! evaluate (its new prompt tokens and its forced tokens) at the per-token prefill time of its
//! own prompt batch, plus its sampled tokens × the one-token decode step measured on the same
//! request unconstrained (same context).
//!
//! Measurements only; this module must not print. Child processes are killed when done.

use super::child_server::{Server, TOOLGRAM_GPU_FLAGS, http, valid_reply};
use super::concurrent::{self, ConcurrentOptions, ConcurrentReport};
use super::{percentile, round_to};
use crate::BenchError;
use crate::peers::Peers;
use serde::Serialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use toolgram_core::validate::validate_call;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_engine::{
    CallGrammar, CallRequest, CallResponse, CallShape, Engine, EngineOptions, Sampling, Session,
};
use toolgram_providers::native_chat_body;

/// One tool pool of the fixed request set.
pub struct Pool {
    /// Its label in the report (`one tool`, `six tools`).
    pub label: String,
    /// The tools file (the CLI reads it).
    pub file: PathBuf,
    /// Its JSON, sent to llama-server as it is.
    pub json: Value,
    /// The same tools, read.
    pub tools: ToolSet,
}

impl Pool {
    /// The pool in a tools file, labelled by its size (`1 tool`, `6 tools`).
    pub fn read(file: &Path) -> Result<Self, BenchError> {
        let (json, tools) = crate::inputs::read_tools(file)?;
        let n = tools.tools().len();
        Ok(Self {
            label: format!("{n} tool{}", if n == 1 { "" } else { "s" }),
            file: file.to_path_buf(),
            json,
            tools,
        })
    }
}

/// What `bench e2e` runs.
pub struct E2eOptions<'a> {
    /// The servers side by side and what they share.
    pub peers: Peers<'a>,
    /// The pools; each runs under `auto` and `required`.
    pub pools: &'a [Pool],
    /// The user's message of every single request.
    pub prompt: &'a str,
    /// Prompts for the concurrent clients (over the last pool).
    pub concurrent_prompts: &'a [String],
    /// Most tokens per reply.
    pub max_tokens: usize,
    /// Fewer concurrent requests (8 instead of 16).
    pub quick: bool,
}

/// One request, every side.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRow {
    /// The pool's label.
    pub pool: String,
    /// `auto` or `required`.
    pub tool_choice: &'static str,
    /// Prompt tokens evaluated (the rest came from the cache).
    pub prompt_evaluated: usize,
    /// Prompt tokens taken from the cache.
    pub prompt_cached: usize,
    /// Tokens sampled.
    pub sampled: usize,
    /// Tokens appended by fast-forward.
    pub forced: usize,
    /// Mask time per sampled step, µs.
    pub mask_us_p50: u32,
    /// 99th percentile, µs.
    pub mask_us_p99: u32,
    /// Mask time over the whole reply, ms.
    pub mask_ms: f64,
    /// Generation time (masks, sampling, decodes), ms.
    pub generate_ms: f64,
    /// Generation time per decode step (a sampled token and the tokens forced after it).
    pub decode_ms_per_step: f64,
    /// Compiling the grammar and building its matcher, ms.
    pub grammar_ms: f64,
    /// Rendering and tokenizing the prompt, ms.
    pub template_ms: f64,
    /// Evaluating the new prompt tokens, ms.
    pub prefill_ms: f64,
    /// The part of `generate_ms` inside llama.cpp's decode, ms.
    pub decode_ms: f64,
    /// The one-token decode step of this request unconstrained (same prompt and context), ms.
    pub step_ms: f64,
    /// toolgram constrained, end to end (render, prefill, decode, parse, validate).
    pub e2e_ms: f64,
    /// The same prompt with no grammar.
    pub unconstrained_ms: f64,
    /// llama-server's own tool calling, its prompt cache warm.
    pub llama_server_warm_ms: f64,
    /// Evaluated and forced tokens at this request's prefill rate + sampled tokens × `step_ms`.
    pub limit_ms: f64,
    /// The limit with forced tokens free: prefill of the prompt + sampled × `step_ms`.
    pub limit_forced_free_ms: f64,
    /// toolgram's reply is a valid call.
    pub valid: bool,
    /// llama-server's reply is a valid call.
    pub llama_server_valid: bool,
    /// The fast-forwarded reply is byte-identical to sampling every token.
    pub ff_identical: bool,
}

/// A one-shot `toolgram call` process.
#[derive(Debug, Clone, Serialize)]
pub struct CliRow {
    /// The pool.
    pub pool: String,
    /// The call with an empty prefix cache, ms (process start to exit; median of three).
    pub cold_ms: f64,
    /// The same call again, the prefix stored by a cold one (median of three).
    pub warm_ms: f64,
}

/// What `bench e2e` reports.
#[derive(Debug, Clone, Serialize)]
pub struct E2eReport {
    /// The model file's name.
    pub model: Option<String>,
    /// CPU threads.
    pub threads: u32,
    /// Where the in-process engine's layers were.
    pub offload: Value,
    /// Context per sequence.
    pub ctx: u32,
    /// The one-token decode step measured unconstrained, ms (median over the requests).
    pub decode_step_ms: f64,
    /// One row per request.
    pub requests: Vec<RequestRow>,
    /// The one-shot CLI, cold and warm.
    pub cli: Vec<CliRow>,
    /// Concurrent clients.
    pub concurrent: Option<ConcurrentReport>,
    /// Mask time over the rest of generation (decodes and sampling), summed over the requests.
    pub overhead_ratio: f64,
    /// toolgram's end-to-end time over llama-server's warm one, summed over the requests.
    pub e2e_vs_llama_server_warm: f64,
    /// Constrained over unconstrained, summed over the requests.
    pub e2e_vs_unconstrained: f64,
    /// The warm one-shot CLI call over the cold one (summed over pools).
    pub cli_warm_vs_cold: f64,
    /// Valid calls per second, four clients over one.
    pub throughput_4_vs_1: Option<f64>,
    /// Requests per second with four clients, toolgram over llama-server `-np 4`.
    pub throughput_vs_llama_server_np4: Option<f64>,
    /// The worst request's end-to-end time over its limit.
    pub e2e_vs_limit: f64,
    /// The same with forced tokens counted free (`limit_forced_free_ms`).
    pub e2e_vs_limit_forced_free: f64,
    /// Every request's fast-forwarded reply equals its token-by-token reply.
    pub ff_identical: bool,
}

/// Run every side.
pub fn run(opts: &E2eOptions<'_>, progress: &mut dyn FnMut(&str)) -> Result<E2eReport, BenchError> {
    progress("toolgram, in process: constrained, token by token, unconstrained");
    let (mut requests, decode_step_ms, offload) = engine_rows(opts)?;
    progress("llama-server --jinja, prompt cache warm");
    llama_server_rows(opts, &mut requests)?;
    progress("one-shot toolgram call: cold, then warm");
    let cli = cli_rows(opts)?;
    let concurrent = match opts.pools.last() {
        Some(pool) => {
            progress("concurrent clients");
            Some(concurrent::run(
                &ConcurrentOptions {
                    peers: opts.peers,
                    clients: &[1, 4],
                    requests: if opts.quick { 8 } else { 16 },
                    tools_json: &pool.json,
                    tools: &pool.tools,
                    prompts: opts.concurrent_prompts,
                    tool_choice: "required",
                    max_tokens: opts.max_tokens,
                },
                progress,
            )?)
        }
        None => None,
    };
    let sum = |f: fn(&RequestRow) -> f64| requests.iter().map(f).sum::<f64>();
    let mask_ms = sum(|r| r.mask_ms);
    let decode_ms = sum(|r| r.generate_ms) - mask_ms;
    let ratio = |a: f64, b: f64| {
        if b > 0.0 {
            round_to(a / b, 3)
        } else {
            f64::NAN
        }
    };
    let e2e = sum(|r| r.e2e_ms);
    Ok(E2eReport {
        model: opts
            .peers
            .model
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
        threads: opts.peers.threads,
        offload,
        ctx: opts.peers.ctx,
        decode_step_ms: round_to(decode_step_ms, 2),
        overhead_ratio: ratio(mask_ms, decode_ms),
        e2e_vs_llama_server_warm: ratio(e2e, sum(|r| r.llama_server_warm_ms)),
        e2e_vs_unconstrained: ratio(e2e, sum(|r| r.unconstrained_ms)),
        cli_warm_vs_cold: ratio(
            cli.iter().map(|c| c.warm_ms).sum(),
            cli.iter().map(|c| c.cold_ms).sum(),
        ),
        throughput_4_vs_1: concurrent.as_ref().and_then(|c| c.throughput_most_vs_1),
        throughput_vs_llama_server_np4: concurrent
            .as_ref()
            .and_then(|c| c.request_throughput_vs_llama_server),
        e2e_vs_limit: requests
            .iter()
            .map(|r| ratio(r.e2e_ms, r.limit_ms))
            .fold(0.0, f64::max),
        e2e_vs_limit_forced_free: requests
            .iter()
            .map(|r| ratio(r.e2e_ms, r.limit_forced_free_ms))
            .fold(0.0, f64::max),
        ff_identical: requests.iter().all(|r| r.ff_identical),
        requests,
        cli,
        concurrent,
    })
}

const CHOICES: [&str; 2] = ["auto", "required"];

/// The user message of the untimed request that puts the tools in the cache.
const WARM_UP: &str = "Which tools do you have?";

/// (a) and (b) on the in-process engine, one session per pool so the tools stay cached.
fn engine_rows(opts: &E2eOptions<'_>) -> Result<(Vec<RequestRow>, f64, Value), BenchError> {
    let engine = Engine::load(
        opts.peers.model,
        &EngineOptions {
            threads: Some(opts.peers.threads),
            n_ctx: Some(opts.peers.ctx),
            gpu: opts.peers.gpu.clone(),
            ..EngineOptions::default()
        },
    )?;
    let messages = [ChatMessage::text("user", opts.prompt)];
    let warm_up = [ChatMessage::text("user", WARM_UP)];
    let mut measured = Vec::new();
    let mut steps = Vec::new();
    for pool in opts.pools {
        let mut session = engine.session()?;
        for choice in CHOICES {
            let ask_with = |session: &mut Session<'_>, messages: &[ChatMessage], sampling| {
                let t0 = Instant::now();
                let r = session.reply(&CallRequest {
                    messages,
                    tools: &pool.tools,
                    grammar: CallGrammar::Shape(CallShape {
                        choice: ToolChoice::from_cli(choice),
                        ..CallShape::default()
                    }),
                    few_shot: false,
                    sampling,
                });
                (r, t0.elapsed().as_secs_f64() * 1e3)
            };
            // Each timed run follows the warm-up, so each evaluates the same user turn.
            let ask = |session: &mut Session<'_>, sampling: Sampling| {
                let short = Sampling {
                    max_tokens: 8,
                    ..sampling.clone()
                };
                // Its reply does not matter (a call cut at 8 tokens is an error): its prompt does.
                let _ = ask_with(session, &warm_up, short);
                ask_with(session, &messages, sampling)
            };
            let greedy = Sampling {
                max_tokens: opts.max_tokens,
                seed: Some(0),
                ..Sampling::default()
            };
            let (r, e2e_ms) = ask(&mut session, greedy.clone());
            let r = r?;
            let (slow, _) = ask(
                &mut session,
                Sampling {
                    no_fast_forward: true,
                    ..greedy.clone()
                },
            );
            let (free, unconstrained_ms) = ask(
                &mut session,
                Sampling {
                    unconstrained: true,
                    ..greedy.clone()
                },
            );
            let free = free?;
            // A reply of no tokens measured no step: it takes the median of the others.
            let step = (free.completion_tokens > 0)
                .then(|| free.timings.generate_ms / free.completion_tokens as f64);
            steps.extend(step);
            measured.push((pool, choice, r, e2e_ms, unconstrained_ms, step, slow.ok()));
        }
    }
    steps.sort_by(f64::total_cmp);
    let median = percentile(&steps, 0.5);
    let rows = measured
        .into_iter()
        .map(|(pool, choice, r, e2e_ms, unconstrained_ms, step, slow)| {
            let sides = Sides {
                e2e_ms,
                unconstrained_ms,
                step_ms: step.unwrap_or(median),
            };
            row(pool, choice, &r, &sides, slow)
        })
        .collect();
    Ok((rows, median, engine.offload().to_json()))
}

/// A request's measurements besides its constrained reply.
struct Sides {
    /// The constrained request end to end, ms.
    e2e_ms: f64,
    /// The same request unconstrained, ms.
    unconstrained_ms: f64,
    /// Its one-token decode step unconstrained, ms.
    step_ms: f64,
}

/// A request's row from its constrained reply.
fn row(
    pool: &Pool,
    choice: &'static str,
    r: &CallResponse,
    sides: &Sides,
    token_by_token: Option<CallResponse>,
) -> RequestRow {
    let t = &r.timings;
    let mut mask = t.mask_us.clone();
    mask.sort_unstable();
    let sampled = r.completion_tokens.saturating_sub(t.forced_tokens);
    let prefill_rate = t.prompt_ms / t.prompt_evaluated.max(1) as f64;
    let sampled_ms = sampled as f64 * sides.step_ms;
    let prompt_only_ms = prefill_rate * t.prompt_evaluated as f64;
    RequestRow {
        pool: pool.label.clone(),
        tool_choice: choice,
        prompt_evaluated: t.prompt_evaluated,
        prompt_cached: r.prompt_tokens.saturating_sub(t.prompt_evaluated),
        sampled,
        forced: t.forced_tokens,
        mask_us_p50: percentile(&mask, 0.5),
        mask_us_p99: percentile(&mask, 0.99),
        mask_ms: round_to(mask.iter().map(|&u| f64::from(u)).sum::<f64>() / 1e3, 2),
        generate_ms: round_to(t.generate_ms, 1),
        decode_ms_per_step: round_to(t.generate_ms / sampled.max(1) as f64, 2),
        grammar_ms: round_to(t.grammar_ms, 2),
        template_ms: round_to(t.template_ms, 2),
        prefill_ms: round_to(t.prompt_ms, 1),
        decode_ms: round_to(t.decode_ms, 1),
        step_ms: round_to(sides.step_ms, 2),
        e2e_ms: round_to(sides.e2e_ms, 1),
        unconstrained_ms: round_to(sides.unconstrained_ms, 1),
        llama_server_warm_ms: 0.0,
        limit_ms: round_to(
            prefill_rate * (t.prompt_evaluated + t.forced_tokens) as f64 + sampled_ms,
            1,
        ),
        limit_forced_free_ms: round_to(prompt_only_ms + sampled_ms, 1),
        valid: !r.tool_calls.is_empty()
            && r.tool_calls
                .iter()
                .all(|c| validate_call(&pool.tools, c).is_ok()),
        llama_server_valid: false,
        ff_identical: token_by_token.is_some_and(|s| s.raw == r.raw),
    }
}

/// (c): each request sent to llama-server (one slot, its prompt cache on) after the warm-up
/// request with the same tools; the second is timed.
fn llama_server_rows(opts: &E2eOptions<'_>, rows: &mut [RequestRow]) -> Result<(), BenchError> {
    let server = Server::llama_server(
        opts.peers.llama_server,
        opts.peers.model,
        opts.peers.threads,
        opts.peers.ctx,
        1,
        opts.peers.gpu,
    )?;
    let mut i = 0;
    for pool in opts.pools {
        for choice in CHOICES {
            let body = |prompt: &str, max_tokens: usize| {
                let mut body = native_chat_body(
                    json!([{"role": "user", "content": prompt}]),
                    &pool.json,
                    &ToolChoice::from_cli(choice),
                    false,
                    max_tokens,
                );
                body["cache_prompt"] = json!(true);
                body.to_string()
            };
            let timed = |warm: bool| -> Result<(f64, Value), BenchError> {
                let body = if warm {
                    body(opts.prompt, opts.max_tokens)
                } else {
                    body(WARM_UP, 8)
                };
                let t0 = Instant::now();
                let (status, text) = http(server.port(), "POST", "/v1/chat/completions", &body)
                    .map_err(|e| BenchError::Server(format!("llama-server: {e}")))?;
                if status != 200 {
                    return Err(BenchError::Server(format!(
                        "llama-server answered {status}: {text}"
                    )));
                }
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                let reply = serde_json::from_str(&text)
                    .map_err(|e| BenchError::Server(format!("llama-server's reply: {e}")))?;
                Ok((if warm { ms } else { 0.0 }, reply))
            };
            timed(false)?;
            let (ms, reply) = timed(true)?;
            if let Some(row) = rows.get_mut(i) {
                row.llama_server_warm_ms = round_to(ms, 1);
                row.llama_server_valid = valid_reply(&pool.tools, &reply);
            }
            i += 1;
        }
    }
    Ok(())
}

/// One-shot processes timed per pool and cache state.
const CLI_RUNS: usize = 3;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    percentile(v, 0.5)
}

/// (d): `toolgram call` as a new process, [`CLI_RUNS`] times cold and as many warm per pool,
/// with a prefix cache of its own (the model folder, and the model's remembered checksum,
/// stay the user's).
fn cli_rows(opts: &E2eOptions<'_>) -> Result<Vec<CliRow>, BenchError> {
    let cache = std::env::temp_dir().join(format!("toolgram-e2e-{}", std::process::id()));
    let models = toolgram_engine::models::cache_dir();
    let mut rows = Vec::new();
    for pool in opts.pools {
        let _ = std::fs::remove_dir_all(&cache);
        let once = || -> Result<f64, BenchError> {
            let t0 = Instant::now();
            let out = Command::new(opts.peers.toolgram)
                .env("XDG_CACHE_HOME", &cache)
                .env("TOOLGRAM_MODELS_DIR", &models)
                .arg("call")
                .arg("--model")
                .arg(opts.peers.model)
                .arg("--tools")
                .arg(&pool.file)
                .args(["--tool-choice", "required"])
                .args(["--threads", &opts.peers.threads.to_string()])
                .args(opts.peers.gpu.cli_args(TOOLGRAM_GPU_FLAGS))
                .args(["--ctx-size", &opts.peers.ctx.to_string()])
                .args(["--max-tokens", &opts.max_tokens.to_string()])
                .arg(opts.prompt)
                .output()
                .map_err(|e| BenchError::Server(format!("toolgram call: {e}")))?;
            if !out.status.success() {
                return Err(BenchError::Server(format!(
                    "toolgram call failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )));
            }
            Ok(t0.elapsed().as_secs_f64() * 1e3)
        };
        // Medians of three: one process start varies by a few hundred ms.
        let mut cold = Vec::with_capacity(CLI_RUNS);
        for _ in 0..CLI_RUNS {
            let _ = std::fs::remove_dir_all(&cache);
            cold.push(once()?);
        }
        // The cache now holds the prefix the last cold call stored.
        let mut warm = Vec::with_capacity(CLI_RUNS);
        for _ in 0..CLI_RUNS {
            warm.push(once()?);
        }
        let cold_ms = round_to(median(&mut cold), 0);
        let warm_ms = round_to(median(&mut warm), 0);
        rows.push(CliRow {
            pool: pool.label.clone(),
            cold_ms,
            warm_ms,
        });
    }
    let _ = std::fs::remove_dir_all(&cache);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgram_engine::{FinishReason, Timings};

    fn reply(raw: &str, calls: Vec<toolgram_core::ToolCall>) -> CallResponse {
        CallResponse {
            reasoning_content: None,
            plan: None,
            content: None,
            tool_calls: calls,
            finish_reason: FinishReason::ToolCalls,
            prompt_tokens: 300,
            completion_tokens: 26,
            raw: raw.to_owned(),
            timings: Timings {
                prompt_evaluated: 15,
                prompt_ms: 200.0,
                generate_ms: 240.0,
                mask_us: vec![300, 100, 200],
                forced_tokens: 18,
                decode_ms: 210.0,
                ..Timings::default()
            },
            mode: Default::default(),
            deferred: Vec::new(),
            ignored: Vec::new(),
            truncated_call: None,
            cut_call: None,
            repeated_text: None,
            call_margin: None,
            count_margin: None,
        }
    }

    #[test]
    fn a_row_splits_cached_evaluated_sampled_and_forced_and_compares_the_slow_reply() {
        let json = json!([{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}}]);
        let pool = Pool {
            label: "1 tool".into(),
            file: PathBuf::from("weather.json"),
            tools: ToolSet::from_json_str(&json.to_string()).expect("valid tools"),
            json,
        };
        let call = toolgram_core::ToolCall {
            id: "c".into(),
            name: "get_weather".into(),
            arguments: json!({"city": "Paris"}),
        };
        let r = reply("<tool_call>x</tool_call>", vec![call]);
        let same = reply("<tool_call>x</tool_call>", Vec::new());
        let sides = Sides {
            e2e_ms: 500.0,
            unconstrained_ms: 700.0,
            step_ms: 30.0,
        };
        let row = row(&pool, "required", &r, &sides, Some(same));
        assert_eq!((row.prompt_evaluated, row.prompt_cached), (15, 285));
        assert_eq!((row.sampled, row.forced), (8, 18));
        assert_eq!((row.mask_us_p50, row.mask_us_p99), (200, 300));
        assert_eq!((row.mask_ms, row.generate_ms), (0.6, 240.0));
        assert_eq!((row.decode_ms_per_step, row.decode_ms), (30.0, 210.0));
        assert!(row.valid && row.ff_identical);
        // 200 ms for 15 prompt tokens: 13.3 ms a token evaluated.
        let rate = 200.0 / 15.0;
        assert_eq!(
            row.limit_ms,
            round_to(rate * (15 + 18) as f64 + 8.0 * 30.0, 1),
            "every evaluated and forced token at the prefill rate, sampled ones at the step"
        );
        assert_eq!(row.limit_forced_free_ms, 200.0 + 8.0 * 30.0);
        let other = reply("<tool_call>y</tool_call>", Vec::new());
        assert!(!super::row(&pool, "auto", &r, &sides, Some(other)).ff_identical);
        assert!(!super::row(&pool, "auto", &r, &sides, None).ff_identical);
    }
}
