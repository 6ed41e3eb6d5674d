//! `toolgram bench mask`: mask time per token of toolgram's constraint (llguidance on the
//! compiled Lark) against llama.cpp's own GBNF grammar sampler (on our GBNF for the same pool),
//! same model vocabulary, same replayed call, same run. Reports p50/p99/mean µs and the ratio.
//! Measurements only.

use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use toolgram_core::compile::ir::compile_ir;
use toolgram_core::compile::{CompileOptions, compile};
use toolgram_core::syntax::prompt::example_value;
use toolgram_core::{ToolCall, ToolChoice, ToolSet};
use toolgram_engine::{Engine, EngineOptions, models};
use toolgram_grammar::gbnf;

#[derive(Args)]
pub(crate) struct MaskArgs {
    /// JSON file with OpenAI-style function tools.
    #[arg(long)]
    pub tools: PathBuf,
    /// Model (default: the default model).
    #[arg(long)]
    pub model: Option<String>,
    /// Replays of each call.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

fn stats(mut v: Vec<f64>) -> serde_json::Value {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| {
        v.get(((v.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    json!({"p50_us": (at(0.5) * 10.0).round() / 10.0, "p99_us": (at(0.99) * 10.0).round() / 10.0,
        "mean_us": (mean * 10.0).round() / 10.0})
}

pub(super) fn run(args: MaskArgs) -> anyhow::Result<()> {
    let tools = ToolSet::from_json_str(&std::fs::read_to_string(&args.tools)?)?;
    let engine = Engine::load(
        &models::resolve(args.model.as_deref())?,
        &EngineOptions::default(),
    )?;
    let syntax = engine.syntax();
    let choice = ToolChoice::Required;
    let lark = compile(&tools, &choice, false, syntax, engine.compile_options())?.lark;
    let ir = compile_ir(
        &tools,
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
        for _ in 0..args.runs {
            match engine.mask_times(&lark, &gbnf, &text) {
                Ok(t) => {
                    tokens += t.tokens;
                    ours.extend(t.llguidance_us);
                    theirs.extend(t.llama_cpp_us);
                }
                Err(e) => {
                    skipped.push(json!({"tool": tool.name, "why": e.to_string()}));
                    break;
                }
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let ratio = mean(&theirs) / mean(&ours).max(f64::MIN_POSITIVE);
    println!(
        "{}",
        json!({"model": engine.model_name(), "syntax": syntax.name, "tokens": tokens,
            "llguidance": stats(ours), "llama_cpp_gbnf": stats(theirs),
            "llama_cpp_over_llguidance_mean": (ratio * 100.0).round() / 100.0,
            "skipped": skipped})
    );
    Ok(())
}
