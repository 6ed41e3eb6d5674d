//! `toolgram bench modes`: the three call modes side by side on BFCL cases and one model —
//! grammar (call + argument schema enforced), json (call shape + tool name enforced,
//! arguments validated after), prompt (nothing enforced; lenient parse, validation, retries).
//! Per mode: valid replies, attempts, right tool, right arguments, latency.
//!
//! Measurements only; it must not be used as a pass/fail test.

use super::bfcl;
use crate::output::CliError;
use anyhow::Context;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;
use toolgram_core::compile::{Mode, Think};
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_engine::{Engine, EngineModel, EngineOptions, Sampling, models};
use toolgram_retry::{RetryPolicy, run};

#[derive(Args)]
pub struct ModesArgs {
    /// BFCL questions file (e.g. `…/bfcl/BFCL_v4_multiple.json`).
    #[arg(long)]
    pub bfcl: PathBuf,
    /// Its possible-answer file.
    #[arg(long)]
    pub answers: PathBuf,
    /// Cases to run (every k-th, spread over the file).
    #[arg(long, default_value_t = 20)]
    pub cases: usize,
    /// Registry model name or role, or a GGUF path.
    #[arg(long)]
    pub model: Option<String>,
    /// CPU threads.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Most tokens per attempt.
    #[arg(long, default_value_t = 256)]
    pub max_tokens: usize,
    /// Most attempts per case.
    #[arg(long, default_value_t = 3)]
    pub max_attempts: usize,
}

#[derive(Default)]
struct Tally {
    valid: usize,
    attempts: usize,
    right_tool: usize,
    right_args: usize,
    latency_ms: Vec<f64>,
}

pub fn run_modes(args: ModesArgs) -> anyhow::Result<()> {
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p)
            .map_err(|e| CliError::new("io_error", format!("cannot read {}: {e}", p.display())))
    };
    let all = bfcl::read(&read(&args.bfcl)?, &read(&args.answers)?);
    let step = (all.len() / args.cases.max(1)).max(1);
    let cases: Vec<_> = all.into_iter().step_by(step).take(args.cases).collect();
    let path = models::resolve(args.model.as_deref()).context("resolving the model")?;
    let engine = Engine::load(
        &path,
        &EngineOptions {
            threads: args.threads,
            ..EngineOptions::default()
        },
    )?;
    let modes = [Mode::Grammar, Mode::Json, Mode::Prompt];
    let mut tallies: Vec<Tally> = modes.iter().map(|_| Tally::default()).collect();
    let mut skipped = Vec::new();
    for case in &cases {
        let tools = match ToolSet::from_value(&case.tools) {
            Ok(t) => t,
            Err(e) => {
                skipped.push(json!({"id": case.id, "reason": e.to_string()}));
                continue;
            }
        };
        let messages = [ChatMessage::text("user", case.question.clone())];
        for (mode, tally) in modes.iter().zip(&mut tallies) {
            let mut session = engine.session()?;
            let mut model = EngineModel {
                session: &mut session,
                tools: &tools,
                choice: ToolChoice::Required,
                parallel: case.truth.len() > 1,
                mode: *mode,
                think: Think::Off,
                sampling: Sampling {
                    max_tokens: args.max_tokens,
                    ..Sampling::default()
                },
                last: None,
                total_tokens: (0, 0),
            };
            let policy = RetryPolicy {
                max_attempts: args.max_attempts,
                consecutive_blocked: args.max_attempts,
            };
            let t0 = Instant::now();
            let outcome = run(&mut model, &tools, &ToolChoice::Required, &messages, policy);
            tally.latency_ms.push(t0.elapsed().as_secs_f64() * 1e3);
            match outcome {
                Ok(o) => {
                    tally.valid += 1;
                    tally.attempts += o.attempts;
                    let (tool_ok, args_ok) = bfcl::matches(&o.reply.tool_calls, &case.truth);
                    tally.right_tool += usize::from(tool_ok);
                    tally.right_args += usize::from(args_ok);
                }
                Err(e) => tally.attempts += e.failed().len().max(1),
            }
        }
    }
    let n = cases.len() - skipped.len();
    println!(
        "| mode | cases | valid | mean attempts | right tool | right arguments | latency p50 ms | latency mean ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (mode, t) in modes.iter().zip(&mut tallies) {
        t.latency_ms.sort_by(f64::total_cmp);
        let p50 = t
            .latency_ms
            .get(t.latency_ms.len() / 2)
            .copied()
            .unwrap_or(0.0);
        let mean = t.latency_ms.iter().sum::<f64>() / t.latency_ms.len().max(1) as f64;
        println!(
            "| {} | {n} | {} | {:.2} | {} | {} | {p50:.0} | {mean:.0} |",
            mode.as_str(),
            t.valid,
            t.attempts as f64 / n.max(1) as f64,
            t.right_tool,
            t.right_args,
        );
    }
    if !skipped.is_empty() {
        eprintln!("{}", json!({"skipped": skipped}));
    }
    Ok(())
}
