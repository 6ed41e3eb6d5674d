//! `bench call`: one request on the embedded engine, constrained and unconstrained
//! ([`Sampling::unconstrained`]) on the same prompt, model and threads, `runs` times each —
//! mask µs per token (p50/p99), decode ms per token, tokens/s, prompt time.
//!
//! Measurements only; this module must not print.

use super::percentile;
use crate::BenchError;
use serde::Serialize;
use std::path::Path;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_engine::gpu::GpuOptions;
use toolgram_engine::{
    CallGrammar, CallRequest, CallShape, Engine, EngineOptions, Sampling, Timings,
};

/// What `bench call` runs.
pub struct CallBenchOptions<'a> {
    /// The GGUF model file.
    pub model: &'a Path,
    /// CPU threads (`None`: [`toolgram_engine::default_threads`]).
    pub threads: Option<u32>,
    /// Where the layers go.
    pub gpu: &'a GpuOptions,
    /// Context size (`None`: the engine's default).
    pub ctx_size: Option<u32>,
    /// The conversation.
    pub messages: &'a [ChatMessage],
    /// The tool pool.
    pub tools: &'a ToolSet,
    /// The tool choice.
    pub choice: ToolChoice,
    /// Allow more than one call.
    pub parallel: bool,
    /// Most tokens per run.
    pub max_tokens: usize,
    /// Runs of each mode.
    pub runs: usize,
}

/// One mode's runs, summed.
#[derive(Debug, Clone, Serialize)]
pub struct ModeSummary {
    /// `constrained` or `unconstrained`.
    pub mode: &'static str,
    /// Runs.
    pub runs: usize,
    /// Completion tokens over all runs.
    pub tokens: usize,
    /// Tokens appended by fast-forward, over all runs.
    pub forced_tokens: usize,
    /// Median mask time per sampled step, µs.
    pub mask_us_p50: u32,
    /// 99th-percentile mask time per sampled step, µs.
    pub mask_us_p99: u32,
    /// Generation time per completion token.
    pub ms_per_token: f64,
    /// Completion tokens per second of generation.
    pub tokens_per_s: f64,
    /// Mean prompt evaluation time per run (each run pays its prompt).
    pub first_prompt_ms: f64,
}

/// What `bench call` reports.
#[derive(Debug, Clone, Serialize)]
pub struct CallBenchReport {
    /// The model file's name.
    pub model: String,
    /// CPU threads used.
    pub threads: u32,
    /// Where the model's layers were ([`toolgram_engine::gpu::Offload::to_json`]).
    pub offload: serde_json::Value,
    /// Constrained first, then unconstrained.
    pub results: Vec<ModeSummary>,
    /// Constrained ms per token over unconstrained (0 when the latter is 0).
    pub ratio_ms_per_token_constrained_over_unconstrained: f64,
}

/// Sum one mode's runs (timings and completion tokens of each).
pub fn summary(mode: &'static str, runs: &[(Timings, usize)]) -> ModeSummary {
    let mut masks: Vec<u32> = runs
        .iter()
        .flat_map(|(t, _)| t.mask_us.iter().copied())
        .collect();
    masks.sort_unstable();
    let tokens: usize = runs.iter().map(|(_, n)| n).sum();
    let gen_ms: f64 = runs.iter().map(|(t, _)| t.generate_ms).sum();
    let prompt_ms: f64 =
        runs.iter().map(|(t, _)| t.prompt_ms).sum::<f64>() / runs.len().max(1) as f64;
    ModeSummary {
        mode,
        runs: runs.len(),
        tokens,
        forced_tokens: runs.iter().map(|(t, _)| t.forced_tokens).sum(),
        mask_us_p50: percentile(&masks, 0.5),
        mask_us_p99: percentile(&masks, 0.99),
        ms_per_token: if tokens > 0 {
            gen_ms / tokens as f64
        } else {
            0.0
        },
        tokens_per_s: if gen_ms > 0.0 {
            tokens as f64 * 1e3 / gen_ms
        } else {
            0.0
        },
        first_prompt_ms: prompt_ms,
    }
}

/// Load the model and time the request in both modes.
pub fn run(opts: &CallBenchOptions<'_>) -> Result<CallBenchReport, BenchError> {
    let engine = Engine::load(
        opts.model,
        &EngineOptions {
            threads: opts.threads,
            n_ctx: opts.ctx_size,
            gpu: opts.gpu.clone(),
            ..Default::default()
        },
    )?;
    let mut results = Vec::new();
    for unconstrained in [false, true] {
        let mut runs = Vec::new();
        for _ in 0..opts.runs {
            // A fresh session per run: every run pays the same prompt cost.
            let mut session = engine.session()?;
            let r = session.call(&CallRequest {
                messages: opts.messages,
                tools: opts.tools,
                grammar: CallGrammar::Shape(CallShape {
                    choice: opts.choice.clone(),
                    parallel: opts.parallel,
                    ..CallShape::default()
                }),
                few_shot: false,
                sampling: Sampling {
                    max_tokens: opts.max_tokens,
                    unconstrained,
                    seed: Some(0),
                    ..Sampling::default()
                },
            })?;
            runs.push((r.timings, r.completion_tokens));
        }
        let mode = if unconstrained {
            "unconstrained"
        } else {
            "constrained"
        };
        results.push(summary(mode, &runs));
    }
    let ratio = match results.as_slice() {
        [c, u] if u.ms_per_token > 0.0 => c.ms_per_token / u.ms_per_token,
        _ => 0.0,
    };
    Ok(CallBenchReport {
        model: engine.model_name().to_owned(),
        threads: opts
            .threads
            .unwrap_or_else(toolgram_engine::default_threads),
        offload: engine.offload().to_json(),
        results,
        ratio_ms_per_token_constrained_over_unconstrained: ratio,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timings(mask_us: Vec<u32>, generate_ms: f64, prompt_ms: f64, forced: usize) -> Timings {
        Timings {
            mask_us,
            generate_ms,
            prompt_ms,
            forced_tokens: forced,
            ..Timings::default()
        }
    }

    #[test]
    fn runs_are_summed_and_masks_pooled() {
        let runs = vec![
            (timings(vec![30, 10], 20.0, 100.0, 2), 4),
            (timings(vec![20, 40], 30.0, 300.0, 1), 6),
        ];
        let s = summary("constrained", &runs);
        assert_eq!((s.runs, s.tokens, s.forced_tokens), (2, 10, 3));
        // Pooled and sorted: 10 20 30 40.
        assert_eq!((s.mask_us_p50, s.mask_us_p99), (30, 40));
        assert_eq!(s.ms_per_token, 5.0);
        assert_eq!(s.tokens_per_s, 200.0);
        assert_eq!(s.first_prompt_ms, 200.0, "the mean per run");
    }

    #[test]
    fn no_tokens_no_division_by_zero() {
        let s = summary("unconstrained", &[]);
        assert_eq!((s.tokens, s.mask_us_p50), (0, 0));
        assert_eq!(
            (s.ms_per_token, s.tokens_per_s, s.first_prompt_ms),
            (0.0, 0.0, 0.0)
        );
    }
}
