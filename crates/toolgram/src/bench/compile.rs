//! `toolgram bench compile`: flags → `toolgram_bench::compile`'s options; progress lines
//! on stderr; the per-subset table (markdown) and the refusals on stdout, the JSON summary on
//! stderr, `--details` as JSON lines.
//!
//! Argument parsing and printing only: reading MaskBench or the JSON-Schema-Test-Suite,
//! compiling, checking and scoring live in `toolgram-eval`.

use crate::output::{CliError, say};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;
use toolgram_bench::BenchError;
use toolgram_bench::compile::{
    CompileBenchOptions, CompileProgress, CompileSummary, SchemaResult, Target, run_maskbench,
    run_suite,
};
use toolgram_bench::datasets::maskbench;

#[derive(Args)]
pub(crate) struct CompileBenchArgs {
    /// MaskBench data directory (`…/jsonschemabench/maskbench/data`).
    #[arg(long, required_unless_present = "suite")]
    pub data: Option<PathBuf>,
    /// Instead: a JSON-Schema-Test-Suite draft directory (`…/tests/draft2020-12`); each
    /// group's schema is one row entry, its tests the instances.
    #[arg(long, conflicts_with = "data")]
    pub suite: Option<PathBuf>,
    /// Run a fixed, seeded sample of this many schemas instead of all.
    #[arg(long)]
    pub sample: Option<usize>,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Ignore formats nobody enforces (`topic`, `color`, …) instead of refusing the schema,
    /// as `--lenient` does for users: each one is counted and reported.
    #[arg(long)]
    pub lenient: bool,
    /// Write the per-schema results (JSON lines) here.
    #[arg(long)]
    pub details: Option<PathBuf>,
    /// Which compiler to measure: `lark` (our keyword pass + llguidance, what the embedded
    /// engine runs), `gbnf` (our own schema → GBNF emitter, checked by llama.cpp's engine) or
    /// `lark-openai` (our own schema → OpenAI-dialect Lark, checked by llguidance).
    #[arg(long, value_enum, default_value = "lark")]
    pub target: TargetArg,
    /// With `--target gbnf`: judge the peer instead of us — the GBNF llama.cpp's own converter
    /// wrote for each schema into this directory (`scripts/llama-cpp-schema-grammars`), run by
    /// the same engine on the same instances, without a post-parse validator.
    #[arg(long)]
    pub peer_gbnf: Option<PathBuf>,
}

/// The compiler a `bench compile` run measures.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TargetArg {
    /// Keyword pass + llguidance's JSON grammar.
    Lark,
    /// Our schema → IR → GBNF, run by llama.cpp.
    Gbnf,
    /// Our schema → IR → OpenAI-dialect Lark, run by llguidance.
    LarkOpenai,
}

impl From<TargetArg> for Target {
    fn from(t: TargetArg) -> Self {
        match t {
            TargetArg::Lark => Target::Lark,
            TargetArg::Gbnf => Target::Gbnf,
            TargetArg::LarkOpenai => Target::LarkOpenai,
        }
    }
}

/// A run's refusal of the flags as given is the user's mistake (`invalid_request`); a folder
/// it cannot read, `io_error`.
fn cli_error(e: BenchError) -> anyhow::Error {
    match e {
        BenchError::Unsupported(m) => CliError::new("invalid_request", m).into(),
        BenchError::Io { .. } => CliError::new("io_error", format!("cannot read {e}")).into(),
        other => other.into(),
    }
}

pub(super) fn run(args: CompileBenchArgs) -> anyhow::Result<()> {
    let opts = CompileBenchOptions {
        target: args.target.into(),
        lenient: args.lenient,
        peer_gbnf: args.peer_gbnf.clone(),
    };
    let started = Instant::now();
    if let Some(dir) = &args.suite {
        let results = run_suite(dir, &opts).map_err(cli_error)?;
        return report(&results, &[], &args, started);
    }
    let Some(data) = &args.data else {
        return Err(CliError::new("invalid_request", "give --data or --suite").into());
    };
    let files = maskbench::files(data, args.sample, args.seed).map_err(cli_error)?;
    let mut progress = |p: CompileProgress| match p {
        CompileProgress::Checked { done, total } if done % 500 == 0 => eprintln!(
            "{done} / {total} schemas, {:.0} s",
            started.elapsed().as_secs_f64()
        ),
        CompileProgress::Checked { .. } => {}
        CompileProgress::Compiled {
            compiled,
            total,
            checker,
        } => eprintln!("{compiled} of {total} schemas compiled; checking them in {checker}…"),
    };
    let results = run_maskbench(&files, &opts, &mut progress).map_err(cli_error)?;
    report(&results, &files, &args, started)
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.1}", 100.0 * a as f64 / b as f64)
    }
}

fn report(
    results: &[SchemaResult],
    files: &[PathBuf],
    args: &CompileBenchArgs,
    started: Instant,
) -> anyhow::Result<()> {
    let s = CompileSummary::of(results);
    say!(
        "| subset | schemas | compiled % | refused % | valid accepted % | invalid rejected % | passing | compile p50 / p99 ms |"
    )?;
    say!("|---|---:|---:|---:|---:|---:|---:|---:|")?;
    for r in &s.rows {
        say!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.1} / {:.1} |",
            r.subset,
            r.schemas,
            pct(r.compiled, r.schemas),
            pct(r.schemas - r.compiled, r.schemas),
            pct(r.valid_accepted, r.valid),
            pct(r.invalid_rejected, r.invalid),
            r.passing,
            r.compile_ms_p50,
            r.compile_ms_p99,
        )?;
    }
    say!(
        "\nvalid instances rejected only for key order or `1.0`-style integers (output policies; counted as passing): {}",
        s.order_only
    )?;
    say!(
        "valid instances rejected by the post-parse validator: {}",
        s.validator_rejected
    )?;
    if s.ir_fallbacks > 0 {
        say!(
            "compiled by toolgram's own schema grammar where llguidance's %json refused (the engine's fallback): {}",
            s.ir_fallbacks
        )?;
    }
    if args.lenient {
        let (formats, in_schemas) = s.ignored_formats;
        let (keywords, kw_schemas) = s.ignored_keywords;
        say!(
            "--lenient: {formats} unknown `format` values ignored in {in_schemas} schemas, {keywords} unknown keywords in {kw_schemas} schemas (each refused without --lenient)"
        )?;
    }
    say!("refusals by reason (top 20):")?;
    for (k, n) in s.refusals.iter().take(20) {
        say!("- {n} × {k}")?;
    }
    if let Some(p) = &args.details {
        let mut lines = Vec::new();
        for (f, r) in files.iter().zip(results) {
            lines.push(serde_json::to_string(&r.detail(f))?);
        }
        std::fs::write(p, lines.join("\n") + "\n")
            .map_err(|e| CliError::new("io_error", format!("cannot write {}: {e}", p.display())))?;
    }
    eprintln!(
        "{}",
        json!({"summary": s.rows, "seconds": started.elapsed().as_secs_f64()})
    );
    Ok(())
}
