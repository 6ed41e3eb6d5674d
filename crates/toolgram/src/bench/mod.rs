//! `toolgram bench call`: constrained vs unconstrained generation on the same prompt, model
//! and threads — mask µs per token (p50/p99), decode ms per token, tokens/s; and
//! `toolgram bench compile` (see [`compile`]) and `toolgram bench server-call` (see
//! [`server_call`]). Grammar vs JSON vs prompt on BFCL is `toolgram eval bfcl`.

mod compile;
mod compile_gbnf;
mod mask;
mod server_call;
mod tools;

use crate::call::{CallArgs, messages};
use clap::Subcommand;
use serde_json::json;
use toolgram_core::{ToolChoice, ToolSet};
use toolgram_engine::{CallRequest, Engine, EngineOptions, Sampling, Timings, models};

#[derive(Subcommand)]
pub(crate) enum BenchCommand {
    /// Time one request constrained and unconstrained, `--runs` times each.
    Call {
        #[command(flatten)]
        call: Box<CallArgs>,
        /// Repetitions of each mode.
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// JSON-Schema coverage and correctness on MaskBench (no model).
    Compile(compile::CompileBenchArgs),
    /// Mask time per token: llguidance vs llama.cpp's GBNF sampler on the same pool and call.
    Mask(mask::MaskArgs),
    /// Grammar tools: tokens of the grammar form vs the JSON forms over the same inputs.
    Tools(tools::ToolsBenchArgs),
    /// One tool call end to end: the embedded engine vs llama-server's own tool calling on
    /// the same GGUF and threads.
    ServerCall(server_call::ServerCallArgs),
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn summary(mode: &str, runs: &[(Timings, usize)]) -> serde_json::Value {
    let mut masks: Vec<u32> = runs
        .iter()
        .flat_map(|(t, _)| t.mask_us.iter().copied())
        .collect();
    masks.sort_unstable();
    let tokens: usize = runs.iter().map(|(_, n)| n).sum();
    let gen_ms: f64 = runs.iter().map(|(t, _)| t.generate_ms).sum();
    let forced: usize = runs.iter().map(|(t, _)| t.forced_tokens).sum();
    let prompt_ms: f64 =
        runs.iter().map(|(t, _)| t.prompt_ms).sum::<f64>() / runs.len().max(1) as f64;
    json!({
        "mode": mode,
        "runs": runs.len(),
        "tokens": tokens,
        "forced_tokens": forced,
        "mask_us_p50": percentile(&masks, 0.5),
        "mask_us_p99": percentile(&masks, 0.99),
        "ms_per_token": if tokens > 0 { gen_ms / tokens as f64 } else { 0.0 },
        "tokens_per_s": if gen_ms > 0.0 { tokens as f64 * 1e3 / gen_ms } else { 0.0 },
        "first_prompt_ms": prompt_ms,
    })
}

pub(crate) fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    let (args, runs) = match cmd {
        BenchCommand::Call { call, runs } => (*call, runs),
        BenchCommand::Compile(args) => return compile::run(args),
        BenchCommand::Mask(args) => return mask::run(args),
        BenchCommand::Tools(args) => return tools::run(args),
        BenchCommand::ServerCall(args) => return server_call::run(args),
    };
    let tools = ToolSet::from_json_str(&std::fs::read_to_string(&args.tools)?)?;
    let msgs = messages(&args)?;
    let path = models::resolve(args.model.as_deref())?;
    let engine = Engine::load(
        &path,
        &EngineOptions {
            threads: args.threads,
            n_ctx: args.ctx_size,
            ..Default::default()
        },
    )?;
    let mut out = Vec::new();
    for unconstrained in [false, true] {
        let mut results = Vec::new();
        for _ in 0..runs {
            // A fresh session per run: every run pays the same prompt cost.
            let mut session = engine.session()?;
            let r = session.call(&CallRequest {
                messages: &msgs,
                tools: &tools,
                choice: ToolChoice::from_cli(&args.tool_choice),
                parallel: args.parallel_tool_calls,
                mode: Default::default(),
                think: Default::default(),
                sampling: Sampling {
                    max_tokens: args.max_tokens,
                    unconstrained,
                    seed: Some(0),
                    ..Sampling::default()
                },
            })?;
            results.push((r.timings, r.completion_tokens));
        }
        out.push(summary(
            if unconstrained {
                "unconstrained"
            } else {
                "constrained"
            },
            &results,
        ));
    }
    let ratio = |k: &str| {
        let a = out[0][k].as_f64().unwrap_or(0.0);
        let b = out[1][k].as_f64().unwrap_or(0.0);
        if b > 0.0 { a / b } else { 0.0 }
    };
    let report = json!({
        "model": engine.model_name(),
        "threads": args.threads.unwrap_or_else(toolgram_engine::default_threads),
        "results": out,
        "ratio_ms_per_token_constrained_over_unconstrained": ratio("ms_per_token"),
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
