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
use serde_json::Value;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use toolgram_eval::outputs::Outputs;
use toolgram_eval::record::mode_key;
use toolgram_eval::record::{ItemRecord, RecordWriter, done_keys, read_records};
use toolgram_eval::report::Row;
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
    #[command(flatten)]
    pub(super) levers: crate::args::LeverArgs,
    #[command(flatten)]
    pub(super) engine: crate::args::EngineArgs,
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
            plan: self.levers.plan(),
            call_bias: self.levers.call_bias,
            count_bias: self.levers.count_bias,
            votes: self.levers.votes,
            stop_repeated_text: self.levers.repeated_text.stops(),
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
        if provider.is_some() {
            // Refused here, not once per item (each would be recorded as a miss).
            EvalMode::refuse_few_shot_on_provider(modes)?;
        }
        let backend = match provider {
            Some(p) => Backend::Provider(p),
            None => Backend::Embedded(EmbeddedConfig {
                model: self.model.clone(),
                engine: self.engine.options(),
                // A request's ballots decode together, one lane each.
                parallel: self.levers.votes,
                max_sessions: self.levers.votes.max(4),
                ..EmbeddedConfig::default()
            }),
        };
        Ok(Runtime::new(backend)?)
    }
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

/// Report what `--out` holds for `groups` (categories or tools): rows over this run's modes
/// and any other recorded there — for BFCL, BFCL's own summary first —, `table` on stdout,
/// then `results.json` (with `run`, which gets the modes and the shared settings added) and
/// `chart.svg`.
pub(super) fn report(
    args: &RunArgs,
    modes: &[EvalMode],
    groups: &[String],
    table: fn(&[Row]) -> String,
    run: Value,
    title: &str,
) -> anyhow::Result<()> {
    let items = args.items_path()?;
    let records = read_records(&items)?;
    let outputs = Outputs::new(
        &records,
        modes,
        groups,
        &args.options(),
        args.eval == "bfcl",
        run,
    );
    say_raw!("{}", outputs.text(table))?;
    let written = outputs.write(&args.out(), title)?;
    eprintln!(
        "eval: {} runs recorded; wrote {}, {}, {}",
        records.len(),
        items.display(),
        written.results.display(),
        written.chart.display()
    );
    Ok(())
}
