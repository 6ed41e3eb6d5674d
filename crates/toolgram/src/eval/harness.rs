//! The harness every evaluation runs in: its arguments ([`RunArgs`]: the model or provider,
//! the modes, the output folder), the progress bar with the running score, and the report
//! (the table on stdout, `results.json` and `chart.svg` beside `items.jsonl`).
//!
//! This module must not run or score an item: `toolgram-eval` does.

use crate::output::say_raw;
use crate::provider::ProviderArgs;
use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use toolgram_engine::EngineOptions;
use toolgram_eval::bfcl::summary;
use toolgram_eval::chart;
use toolgram_eval::record::mode_key;
use toolgram_eval::record::{ItemRecord, RecordWriter, done_keys, read_records};
use toolgram_eval::report::{self, Row};
use toolgram_eval::run::{Done, EvalMode};
use toolgram_eval::{Protocol, RunOptions};
use toolgram_runtime::{Backend, EmbeddedConfig, ProviderConfig, Runtime};

/// What every evaluation takes: the model or provider, the modes, the output folder.
#[derive(Args)]
pub(crate) struct RunArgs {
    /// Registry model name or role, or a GGUF path (default: the default model).
    #[arg(long)]
    pub(super) model: Option<String>,
    #[command(flatten)]
    pub(super) provider: ProviderArgs,
    /// Output folder (default: `eval-out/bfcl` or `eval-out/tools`).
    #[arg(long)]
    pub(super) out: Option<PathBuf>,
    /// Keep `items.jsonl` and skip what it already holds.
    #[arg(long)]
    pub(super) resume: bool,
    /// Most tokens per attempt (default: 512 under protocol toolgram; under bfcl none is sent
    /// to a server, as BFCL sends none, and the embedded model gets 2,048, the figure the stored
    /// BFCL runs used).
    #[arg(long)]
    pub(super) max_tokens: Option<usize>,
    /// Most attempts per item (retries after a failed validation; protocol bfcl: one).
    #[arg(long, default_value_t = 3)]
    pub(super) max_attempts: usize,
    /// Whose rules: `toolgram` (the internal A/B — retries with feedback, the same prompt for
    /// every mode, max_tokens 512, greedy) or `bfcl` (BFCL's function-calling protocol — one
    /// attempt, no added system prompt, temperature 0.001, BFCL's decode — figures that compare
    /// with the leaderboard).
    #[arg(long, default_value = "toolgram", value_parser = ["toolgram", "bfcl"])]
    pub(super) protocol: String,
    /// Plan, then calls (embedded model): the reply first states how many calls it will
    /// make, then makes exactly that many (docs/eval.md, "Plan, then calls").
    #[arg(long)]
    pub(super) plan: bool,
    /// Added to the logits of the tokens that open a call where the reply may call or not
    /// (tool_choice auto; under --plan, to the counts 1-9), -100 to 100: above 0 calls more
    /// often, below 0 declines more often (default: -2 under --plan, else 0; docs/eval.md, "Call or text").
    #[arg(long, allow_negative_numbers = true, value_parser = crate::args::call_bias)]
    pub(super) call_bias: Option<f32>,
    /// Ballots: answer each request this many times at once (the first as asked, the others
    /// sampled at 0.7 or the request's temperature if higher) and return the answer most of them give, calls compared as JSON values
    /// (docs/eval.md, "Votes").
    #[arg(long, default_value_t = 1, value_parser = crate::args::votes)]
    pub(super) votes: usize,
    #[arg(long, help = crate::args::THREADS_HELP)]
    pub(super) threads: Option<u32>,
    #[command(flatten)]
    pub(super) gpu: crate::args::GpuArgs,
    /// Context size (embedded model).
    #[arg(long)]
    pub(super) ctx_size: Option<u32>,
    /// Which evaluation (`bfcl`, `tools`): names the default output folder.
    #[arg(skip)]
    pub(super) eval: &'static str,
}

impl RunArgs {
    pub(super) fn options(&self) -> RunOptions {
        RunOptions {
            max_tokens: self.max_tokens,
            max_attempts: self.max_attempts,
            protocol: self.protocol(),
            plan: self.plan,
            call_bias: self.call_bias,
            votes: self.votes,
        }
    }

    pub(super) fn protocol(&self) -> Protocol {
        Protocol::parse(&self.protocol).unwrap_or_default()
    }

    /// `--out`, or the evaluation's own folder under `eval-out/` (so one evaluation never
    /// truncates another's records).
    pub(super) fn out(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| Path::new("eval-out").join(self.eval))
    }

    pub(super) fn items_path(&self) -> anyhow::Result<PathBuf> {
        let out = self.out();
        std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
        Ok(out.join("items.jsonl"))
    }

    /// What `items.jsonl` already holds (`--resume`) and a writer appending to it.
    pub(super) fn records(&self) -> anyhow::Result<(Done, RecordWriter)> {
        let path = self.items_path()?;
        let done = if self.resume {
            done_keys(&path)?
        } else {
            Done::default()
        };
        Ok((done, RecordWriter::open(&path, !self.resume)?))
    }

    /// The run stage for `modes`: the embedded model (loaded once) or the provider.
    pub(super) fn runtime(
        &self,
        provider: Option<ProviderConfig>,
        modes: &[EvalMode],
    ) -> anyhow::Result<Runtime> {
        if provider.is_some() && modes.iter().any(|m| m.few_shot()) {
            // Refused here, not once per item (each would be recorded as a miss).
            let names: Vec<&str> = modes
                .iter()
                .filter(|m| m.few_shot())
                .map(|m| m.name())
                .collect();
            anyhow::bail!(
                "mode {} gives the model prompt mode's instructions, which providers are not \
                 sent outside prompt mode: run it on the embedded model, or use its -template \
                 form (the provider renders the tools itself)",
                names.join(", ")
            );
        }
        let backend = match provider {
            Some(p) => Backend::Provider(p),
            None => Backend::Embedded(EmbeddedConfig {
                model: self.model.clone(),
                engine: EngineOptions {
                    threads: self.threads,
                    n_ctx: self.ctx_size,
                    gpu: self.gpu.options(),
                    ..EngineOptions::default()
                },
                // A request's ballots decode together, one lane each.
                parallel: self.votes,
                max_sessions: self.votes.max(4),
                ..EmbeddedConfig::default()
            }),
        };
        Ok(Runtime::new(backend)?)
    }
}

/// Modes from `--mode` (or `default`).
pub(super) fn modes(names: &[String], default: &[EvalMode]) -> anyhow::Result<Vec<EvalMode>> {
    if names.is_empty() {
        return Ok(default.to_vec());
    }
    Ok(names
        .iter()
        .map(|m| EvalMode::parse(m))
        .collect::<Result<_, _>>()?)
}

/// The progress bar, and the running score per mode in its message; a line per 20 runs
/// when stderr is not a terminal.
pub(super) struct Progress {
    bar: ProgressBar,
    total: u64,
    tally: HashMap<String, (usize, usize)>,
}

impl Progress {
    pub(super) fn new(total: usize) -> Self {
        let bar = ProgressBar::new(total as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} (eta {eta}) {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        Self {
            bar,
            total: total as u64,
            tally: HashMap::new(),
        }
    }

    pub(super) fn record(&mut self, r: &ItemRecord) {
        let t = self
            .tally
            .entry(mode_key(&r.mode, &r.protocol))
            .or_default();
        t.0 += usize::from(r.correct);
        t.1 += 1;
        if r.mode == "native-lenient" {
            return;
        }
        let mut score: Vec<String> = self
            .tally
            .iter()
            .map(|(m, (ok, n))| format!("{m} {ok}/{n}"))
            .collect();
        score.sort();
        self.bar
            .set_message(format!("{} · {}", r.category, score.join(" · ")));
        self.bar.inc(1);
        let at = self.bar.position();
        if !std::io::stderr().is_terminal() && (at.is_multiple_of(20) || at == self.total) {
            eprintln!("eval: {at}/{} {}", self.total, self.bar.message());
        }
    }

    /// Append `r` to `items.jsonl` and count it.
    pub(super) fn sink<'a>(
        &'a mut self,
        writer: &'a mut RecordWriter,
    ) -> impl FnMut(&ItemRecord) -> Result<(), toolgram_eval::EvalError> + 'a {
        move |r| {
            writer.write(r)?;
            self.record(r);
            Ok(())
        }
    }

    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Mode keys for the report (mode, and protocol when not toolgram's): this run's first, then
/// any other recorded for `groups`.
fn report_modes(
    modes: &[EvalMode],
    protocol: Protocol,
    records: &[ItemRecord],
    groups: &[String],
) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for m in modes {
        names.push(mode_key(m.name(), protocol.name()));
        if *m == EvalMode::Native && protocol == Protocol::Toolgram {
            names.push("native-lenient".to_owned());
        }
    }
    for r in records.iter().filter(|r| groups.contains(&r.category)) {
        let key = mode_key(&r.mode, &r.protocol);
        if !names.contains(&key) {
            names.push(key);
        }
    }
    names
}

/// Report what `--out` holds for `groups` (categories or tools): rows over this run's modes
/// and any other recorded there — for BFCL, BFCL's own summary first —, `table` on stdout,
/// then `results.json` (with `run`, which gets the modes and the shared settings added, and
/// BFCL's summary as `bfcl_summary`) and `chart.svg`.
pub(super) fn report(
    args: &RunArgs,
    modes: &[EvalMode],
    groups: &[String],
    table: fn(&[Row]) -> String,
    mut run: Value,
    title: &str,
) -> anyhow::Result<()> {
    let records = read_records(&args.items_path()?)?;
    let options = args.options();
    let mode_names = report_modes(modes, options.protocol, &records, groups);
    let rows = report::rows(&records, groups, &mode_names);
    let summary = (args.eval == "bfcl").then(|| summary::summaries(&rows));
    if let Some(s) = &summary {
        say_raw!(
            "BFCL's own summary (non-live overall = mean of simple, multiple, parallel and \
             parallel_multiple; simple = mean of its three languages; irrelevance beside it):\n\n{}\n\
             Per category (the `{}` row pools every item: toolgram's own figure, not BFCL's):\n",
            summary::table(s),
            report::POOLED
        )?;
    }
    say_raw!("{}", table(&rows))?;
    run["modes"] = json!(mode_names);
    run["protocol"] = json!(options.protocol.name());
    run["max_tokens"] = json!(options.max_tokens);
    run["max_attempts"] = json!(options.attempts());
    run["temperature"] = json!(match options.protocol {
        Protocol::Toolgram => 0.0,
        Protocol::Bfcl => f64::from(toolgram_eval::bfcl::fc::TEMPERATURE),
    });
    run["built_from"] = json!(toolgram_eval::record::provenance());
    let mut results = report::results_json(&rows, run);
    if let Some(s) = summary {
        results["bfcl_summary"] = json!(s);
    }
    write_outputs(&args.out(), &rows, &results, title)
}

/// Write `results.json` and `chart.svg` next to `items.jsonl`, and say where.
fn write_outputs(out: &Path, rows: &[Row], json: &Value, title: &str) -> anyhow::Result<()> {
    let results = out.join("results.json");
    std::fs::write(&results, serde_json::to_string_pretty(json)?)
        .with_context(|| format!("writing {}", results.display()))?;
    let svg = out.join("chart.svg");
    chart::draw(rows, title, &svg)?;
    let items = read_records(&out.join("items.jsonl"))?.len();
    eprintln!(
        "eval: {items} runs recorded; wrote {}, {}, {}",
        out.join("items.jsonl").display(),
        results.display(),
        svg.display()
    );
    Ok(())
}
