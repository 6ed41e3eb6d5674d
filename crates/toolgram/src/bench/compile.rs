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
    #[arg(long, default_value = "lark", value_parser = target)]
    pub target: Target,
    /// With `--target gbnf`: judge the peer instead of us — the GBNF llama.cpp's own converter
    /// wrote for each schema into this directory (`scripts/llama-cpp-schema-grammars`), run by
    /// the same engine on the same instances, without a post-parse validator.
    #[arg(long)]
    pub peer_gbnf: Option<PathBuf>,
}

/// `--target NAME`.
fn target(name: &str) -> Result<Target, String> {
    Target::from_name(name).ok_or_else(|| format!("`{name}`: lark, gbnf or lark-openai"))
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
        target: args.target,
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

fn report(
    results: &[SchemaResult],
    files: &[PathBuf],
    args: &CompileBenchArgs,
    started: Instant,
) -> anyhow::Result<()> {
    let s = CompileSummary::of(results);
    say!("{}", s.markdown(args.lenient).trim_end())?;
    if let Some(p) = &args.details {
        let mut lines = String::new();
        for (f, r) in files.iter().zip(results) {
            lines += &(serde_json::to_string(&r.detail(f))? + "\n");
        }
        std::fs::write(p, lines)
            .map_err(|e| CliError::new("io_error", format!("cannot write {}: {e}", p.display())))?;
    }
    eprintln!(
        "{}",
        json!({"summary": s.rows, "seconds": started.elapsed().as_secs_f64()})
    );
    Ok(())
}
