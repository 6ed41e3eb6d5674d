//! `bench mask`: mask time per token of toolgram's constraint (llguidance on the compiled
//! Lark) against llama.cpp's own GBNF grammar sampler (on our GBNF for the same pool), same
//! model vocabulary, same replayed call per tool, same run — through the engine's
//! [`toolgram_engine::instrument`] hook. Reports p50/p99/mean µs and the ratio of the means.
//!
//! Measurements only; this module must not print.

use super::{mean, percentile, round_to};
use crate::BenchError;
use serde::Serialize;
use std::path::Path;
use toolgram_core::compile::ir::compile_ir;
use toolgram_core::compile::{CompileOptions, compile};
use toolgram_core::syntax::prompt::example_value;
use toolgram_core::{ToolCall, ToolChoice, ToolSet};
use toolgram_engine::{Engine, EngineOptions};
use toolgram_grammar::gbnf;

/// What `bench mask` runs.
pub struct MaskBenchOptions<'a> {
    /// The GGUF model file (its vocabulary is what both constraints mask).
    pub model: &'a Path,
    /// The tool pool; one example call per tool is replayed.
    pub tools: &'a ToolSet,
    /// Replays of each call.
    pub runs: usize,
}

/// Per-token mask times of one constraint, µs (one decimal).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaskStats {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Mean.
    pub mean_us: f64,
}

impl MaskStats {
    /// The statistics of `times` (any order).
    pub fn of(mut times: Vec<f64>) -> Self {
        times.sort_by(f64::total_cmp);
        Self {
            p50_us: round_to(percentile(&times, 0.5), 1),
            p99_us: round_to(percentile(&times, 0.99), 1),
            mean_us: round_to(mean(&times), 1),
        }
    }
}

/// A tool whose call could not be replayed, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// The tool.
    pub tool: String,
    /// The refusal.
    pub why: String,
}

/// What `bench mask` reports.
#[derive(Debug, Clone, Serialize)]
pub struct MaskBenchReport {
    /// The model file's name.
    pub model: String,
    /// The call syntax replayed.
    pub syntax: &'static str,
    /// Tokens replayed (each counted once per run).
    pub tokens: usize,
    /// llguidance's mask times.
    pub llguidance: MaskStats,
    /// llama.cpp's GBNF sampler's.
    pub llama_cpp_gbnf: MaskStats,
    /// Mean llama.cpp time over mean llguidance time (two decimals).
    pub llama_cpp_over_llguidance_mean: f64,
    /// Tools left out.
    pub skipped: Vec<Skipped>,
}

/// Load the model, compile the pool for both constraints, and replay one example call per
/// tool `runs` times under each.
pub fn run(opts: &MaskBenchOptions<'_>) -> Result<MaskBenchReport, BenchError> {
    let tools = opts.tools;
    let engine = Engine::load(opts.model, &EngineOptions::default())?;
    let syntax = engine.syntax();
    let choice = ToolChoice::Required;
    let lark = compile(tools, &choice, false, syntax, engine.compile_options())?.lark;
    let ir = compile_ir(
        tools,
        &choice,
        false,
        syntax,
        &CompileOptions::default(),
        false,
    )?;
    let gbnf = gbnf::emit(&ir.grammar);
    let (mut ours, mut theirs, mut tokens) = (Vec::new(), Vec::new(), 0);
    let mut skipped = Vec::new();
    for tool in tools.tools() {
        let call = ToolCall {
            id: String::new(),
            name: tool.name.clone(),
            arguments: example_value(&tool.parameters, &tool.name, 0),
        };
        let text = syntax.render_calls(&[call]);
        for _ in 0..opts.runs {
            match engine.mask_times(&lark, &gbnf, &text) {
                Ok(t) => {
                    tokens += t.tokens;
                    ours.extend(t.llguidance_us);
                    theirs.extend(t.llama_cpp_us);
                }
                Err(e) => {
                    skipped.push(Skipped {
                        tool: tool.name.clone(),
                        why: e.to_string(),
                    });
                    break;
                }
            }
        }
    }
    let ratio = mean(&theirs) / mean(&ours).max(f64::MIN_POSITIVE);
    Ok(MaskBenchReport {
        model: engine.model_name().to_owned(),
        syntax: syntax.name,
        tokens,
        llguidance: MaskStats::of(ours),
        llama_cpp_gbnf: MaskStats::of(theirs),
        llama_cpp_over_llguidance_mean: round_to(ratio, 2),
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_sort_and_round() {
        let s = MaskStats::of(vec![3.04, 1.0, 2.06, 100.0]);
        // Sorted 1.0 2.06 3.04 100.0: p50 at index 1.5 → 2 → 3.04 → 3.0.
        assert_eq!(
            s,
            MaskStats {
                p50_us: 3.0,
                p99_us: 100.0,
                mean_us: 26.5
            }
        );
        let empty = MaskStats::of(Vec::new());
        assert_eq!((empty.p50_us, empty.mean_us), (0.0, 0.0));
    }
}
