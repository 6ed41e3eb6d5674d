//! `toolgram eval bfcl`: BFCL categories × modes on the embedded model (or a provider), and a
//! peer server's own tool calling beside them; a progress bar while it runs, then the table on
//! stdout and `items.jsonl`, `results.json`, `chart.svg` in `--out` — over every mode recorded
//! there, so a peer run resumed into the folder of an embedded run reports both side by side.
//!
//! Argument parsing and printing only: reading, running and scoring live in `toolgram-eval`.

use crate::provider::ProviderArgs;
use anyhow::Context;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use toolgram_engine::EngineOptions;
use toolgram_eval::bfcl::{self, DEFAULT_CATEGORIES, Item};
use toolgram_eval::peer::Peer;
use toolgram_eval::record::{RecordWriter, done_keys, read_records};
use toolgram_eval::run::{EvalMode, RunOptions, Targets, pending, run_items};
use toolgram_eval::{chart, report};
use toolgram_runtime::{Backend, EmbeddedConfig, Runtime};

/// `toolgram eval …`
#[derive(Subcommand)]
pub enum EvalCommand {
    /// BFCL: accuracy, validity, convergence, tokens and latency per category and mode.
    Bfcl(BfclArgs),
}

/// Arguments of `toolgram eval bfcl`.
#[derive(Args)]
pub struct BfclArgs {
    /// Folder with `BFCL_v<N>_<category>.json` and `possible_answer/`.
    #[arg(long, default_value = "../shared/data/bfcl")]
    data: PathBuf,
    /// Categories, comma-separated (default: the seven of the shared data).
    #[arg(long, value_delimiter = ',')]
    category: Vec<String>,
    /// Modes, comma-separated: grammar, json, prompt, native (a peer's own tool calling;
    /// needs --provider). Default: grammar,json,prompt; native with --provider.
    #[arg(long, value_delimiter = ',')]
    mode: Vec<String>,
    /// Registry model name or role, or a GGUF path (default: the default model).
    #[arg(long)]
    model: Option<String>,
    #[command(flatten)]
    provider: ProviderArgs,
    /// Items per category, spread evenly over the file (default: all).
    #[arg(long)]
    limit: Option<usize>,
    /// Output folder.
    #[arg(long, default_value = "eval-out")]
    out: PathBuf,
    /// Keep `items.jsonl` and skip what it already holds.
    #[arg(long)]
    resume: bool,
    /// Most tokens per attempt.
    #[arg(long, default_value_t = 512)]
    max_tokens: usize,
    /// Most attempts per item (retries after a failed validation).
    #[arg(long, default_value_t = 3)]
    max_attempts: usize,
    /// CPU threads (embedded model).
    #[arg(long)]
    threads: Option<u32>,
    /// Context size (embedded model).
    #[arg(long)]
    ctx_size: Option<u32>,
}

/// Run an `eval` subcommand.
pub fn run(cmd: EvalCommand) -> anyhow::Result<()> {
    match cmd {
        EvalCommand::Bfcl(args) => bfcl_cmd(args),
    }
}

fn spread(items: Vec<Item>, limit: Option<usize>) -> Vec<Item> {
    match limit {
        Some(n) if n < items.len() => {
            let step = items.len() as f64 / n.max(1) as f64;
            (0..n)
                .filter_map(|k| items.get((k as f64 * step) as usize).cloned())
                .collect()
        }
        _ => items,
    }
}

fn bfcl_cmd(args: BfclArgs) -> anyhow::Result<()> {
    let categories: Vec<String> = if args.category.is_empty() {
        DEFAULT_CATEGORIES.iter().map(|c| (*c).to_owned()).collect()
    } else {
        args.category.clone()
    };
    let provider = args.provider.resolve(args.model.as_deref())?;
    let modes: Vec<EvalMode> = match (&args.mode[..], &provider) {
        ([], Some(_)) => vec![EvalMode::Native],
        ([], None) => vec![EvalMode::Grammar, EvalMode::Json, EvalMode::Prompt],
        (names, _) => names
            .iter()
            .map(|m| EvalMode::parse(m))
            .collect::<Result<_, _>>()?,
    };
    let mut items = Vec::new();
    for c in &categories {
        items.extend(spread(bfcl::read_category(&args.data, c)?, args.limit));
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let items_path = args.out.join("items.jsonl");
    let done = if args.resume {
        done_keys(&items_path)?
    } else {
        Default::default()
    };
    let mut writer = RecordWriter::open(&items_path, !args.resume)?;

    let wants_runtime = modes.iter().any(|m| *m != EvalMode::Native);
    let peer = match (&provider, modes.contains(&EvalMode::Native)) {
        (Some(p), true) => Some(Peer::new(&p.provider)),
        (None, true) => anyhow::bail!("mode native needs --provider (e.g. llama-server)"),
        _ => None,
    };
    let runtime = if wants_runtime {
        let backend = match provider.clone() {
            Some(p) => Backend::Provider(p),
            None => Backend::Embedded(EmbeddedConfig {
                model: args.model.clone(),
                engine: EngineOptions {
                    threads: args.threads,
                    n_ctx: args.ctx_size,
                    ..EngineOptions::default()
                },
                ..EmbeddedConfig::default()
            }),
        };
        Some(Runtime::new(backend)?)
    } else {
        None
    };
    let model = runtime
        .as_ref()
        .map(Runtime::model_name)
        .or_else(|| provider.as_ref().and_then(|p| p.provider.model.clone()))
        .unwrap_or_default();

    let total = pending(&items, &modes, &done) as u64;
    let bar = progress(total);
    let mut tally: HashMap<String, (usize, usize)> = HashMap::new();
    let options = RunOptions {
        max_tokens: args.max_tokens,
        max_attempts: args.max_attempts,
    };
    let targets = Targets {
        runtime: runtime.as_ref(),
        peer: peer.as_ref(),
    };
    run_items(&items, &modes, &targets, options, &done, |r| {
        writer.write(r)?;
        let t = tally.entry(r.mode.clone()).or_default();
        t.0 += usize::from(r.correct);
        t.1 += 1;
        if r.mode != "native-lenient" {
            let mut score: Vec<String> = tally
                .iter()
                .map(|(m, (ok, n))| format!("{m} {ok}/{n}"))
                .collect();
            score.sort();
            bar.set_message(format!("{} · {}", r.category, score.join(" · ")));
            bar.inc(1);
            if !std::io::stderr().is_terminal()
                && (bar.position().is_multiple_of(20) || bar.position() == total)
            {
                eprintln!("eval: {}/{total} {}", bar.position(), bar.message());
            }
        }
        Ok(())
    })?;
    bar.finish_and_clear();

    let mut mode_names: Vec<String> = Vec::new();
    for m in &modes {
        mode_names.push(m.name().to_owned());
        if *m == EvalMode::Native {
            mode_names.push("native-lenient".to_owned());
        }
    }
    // The table shows every mode recorded in `--out` (a peer run resumed into the folder of
    // an embedded run shows both), this run's modes first.
    let records = read_records(&items_path)?;
    for r in records.iter().filter(|r| categories.contains(&r.category)) {
        if !mode_names.contains(&r.mode) {
            mode_names.push(r.mode.clone());
        }
    }
    let rows = report::rows(&records, &categories, &mode_names);
    print!("{}", report::table(&rows));
    let run = json!({
        "model": model,
        "provider": provider.as_ref().map(|p| p.provider.kind.name()),
        "data": args.data,
        "categories": categories,
        "modes": mode_names,
        "limit": args.limit,
        "max_tokens": args.max_tokens,
        "max_attempts": args.max_attempts,
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "temperature": 0,
    });
    let results = args.out.join("results.json");
    std::fs::write(
        &results,
        serde_json::to_string_pretty(&report::results_json(&rows, run))?,
    )
    .with_context(|| format!("writing {}", results.display()))?;
    let title = format!("BFCL · {model}");
    chart::draw(&rows, &title, &args.out.join("chart.svg"))?;
    eprintln!(
        "eval: {} item runs; wrote {}, {}, {}",
        records.len(),
        items_path.display(),
        results.display(),
        args.out.join("chart.svg").display()
    );
    Ok(())
}

fn progress(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} (eta {eta}) {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
