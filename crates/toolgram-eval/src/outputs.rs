//! What an evaluation reports when it ends: the rows over every mode recorded in its folder
//! (this run's modes first, so a run resumed into the folder of another reports both side by
//! side), BFCL's own summary for a BFCL run, the text for the terminal, and `results.json`
//! (with the run's settings under `run`) and `chart.svg` written beside `items.jsonl`.
//!
//! This module must not run or score items, and must not print: it returns the text.

use crate::bfcl::summary::{self, Summary};
use crate::record::{ItemRecord, mode_key};
use crate::report::{self, POOLED, Row};
use crate::run::EvalMode;
use crate::{EvalError, Protocol, RunOptions, chart};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// An evaluation's report.
pub struct Outputs {
    /// One row per group (category or tool) and mode, then the pooled rows.
    pub rows: Vec<Row>,
    /// BFCL's own summary per mode (BFCL runs only).
    pub summary: Option<Vec<Summary>>,
    /// `results.json`.
    pub results: Value,
}

/// The files [`Outputs::write`] wrote.
pub struct Written {
    /// `results.json`.
    pub results: PathBuf,
    /// `chart.svg`.
    pub chart: PathBuf,
}

impl Outputs {
    /// The report of `records` for `groups`: rows over this run's `modes` and any other
    /// recorded for them; BFCL's summary when `bfcl`; `run` (what the caller knows of the run)
    /// gets the modes and the shared settings added.
    pub fn new(
        records: &[ItemRecord],
        modes: &[EvalMode],
        groups: &[String],
        options: &RunOptions,
        bfcl: bool,
        mut run: Value,
    ) -> Self {
        let mode_names = report_modes(modes, options.protocol, records, groups);
        let rows = report::rows(records, groups, &mode_names);
        let summary = bfcl.then(|| summary::summaries(&rows));
        run["modes"] = json!(mode_names);
        run["protocol"] = json!(options.protocol.name());
        run["max_tokens"] = json!(options.max_tokens);
        run["max_attempts"] = json!(options.attempts());
        run["temperature"] = json!(match options.protocol {
            Protocol::Toolgram => 0.0,
            Protocol::Bfcl => f64::from(crate::bfcl::fc::TEMPERATURE),
        });
        run["built_from"] = json!(crate::record::provenance());
        let mut results = report::results_json(&rows, run);
        if let Some(s) = &summary {
            results["bfcl_summary"] = json!(s);
        }
        Self {
            rows,
            summary,
            results,
        }
    }

    /// The text for the terminal: BFCL's summary first (BFCL runs), then `table`'s rows.
    pub fn text(&self, table: fn(&[Row]) -> String) -> String {
        let rows = table(&self.rows);
        match &self.summary {
            Some(s) => format!(
                "BFCL's own summary (non-live overall = mean of simple, multiple, parallel and \
                 parallel_multiple; simple = mean of its three languages; irrelevance beside it):\n\n{}\n\
                 Per category (the `{POOLED}` row pools every item: toolgram's own figure, not BFCL's):\n{rows}",
                summary::table(s),
            ),
            None => rows,
        }
    }

    /// Write `results.json` and `chart.svg` (titled `title`) into `out`.
    pub fn write(&self, out: &Path, title: &str) -> Result<Written, EvalError> {
        let results = out.join("results.json");
        let text = serde_json::to_string_pretty(&self.results)
            .map_err(|e| EvalError::io(&results, std::io::Error::other(e)))?;
        std::fs::write(&results, text).map_err(|e| EvalError::io(&results, e))?;
        let chart = out.join("chart.svg");
        chart::draw(&self.rows, title, &chart)?;
        Ok(Written { results, chart })
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
