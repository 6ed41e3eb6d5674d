//! Rows per category and mode from the item records: accuracy (BFCL's AST checker; a reply
//! with no decodable call is BFCL's correct refusal on `irrelevance`), the strict accuracy (a
//! run that ended without a reply is a miss there too), first
//! replies that parse and, of those, the ones whose calls are all schema-valid, convergence (a structured
//! call when one was due) and first-tool match (the first call names an expected tool) as the
//! Metnos planner bench reports them, mean output tokens, mean and p95 latency, attempts per
//! item; the terminal table and `results.json`. Rates are in 0..1; a [`POOLED`] row per mode
//! pools every item of the categories shown — toolgram's own item-weighted figure, which BFCL
//! does not use (its summary is `bfcl::summary`). Rows never pool protocols, and each says which runs
//! (commit and CPU) made its records.
//!
//! This module must not run or score items.

use crate::record::{ItemRecord, mode_key};
use serde::Serialize;
use serde_json::{Value, json};

/// The category name of the row that pools every item of a mode (item-weighted: not BFCL's
/// summary, which averages categories).
pub const POOLED: &str = "all (items pooled)";

/// One category × mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The category ([`POOLED`] for the pooled row).
    pub category: String,
    /// The mode.
    pub mode: String,
    /// The protocol the items ran under (`toolgram`, `bfcl`).
    pub protocol: String,
    /// What ran the items: each distinct `commit · cpu` of the records (empty for records
    /// made before runs were recorded) — more than one when the row pools several runs.
    pub runs: Vec<String>,
    /// Items.
    pub n: usize,
    /// Items BFCL's checker accepts.
    pub accuracy: f64,
    /// toolgram's stricter reading: items BFCL's checker accepts whose run also ended with a
    /// reply — a run cut inside a call or out of retries is a miss even where no call was
    /// decoded (differs from `accuracy` only on `irrelevance`).
    pub strict_accuracy: f64,
    /// First replies that could be read (of the items whose tools were not refused).
    pub parsed: f64,
    /// Of the first replies that could be read, those whose calls were all schema-valid: a
    /// reply cut off at `max_tokens` or unreadable counts against `parsed`, not here.
    pub valid: f64,
    /// Items with a call due that got one (`None` when none was due).
    pub convergence: Option<f64>,
    /// Items with a call due whose first call names an expected tool.
    pub first_tool_match: Option<f64>,
    /// Mean generated tokens (items where they were counted).
    pub mean_tokens: Option<f64>,
    /// Mean wall clock per item.
    pub mean_latency_ms: f64,
    /// 95th percentile wall clock.
    pub p95_latency_ms: f64,
    /// Mean attempts per item.
    pub attempts: f64,
}

impl Row {
    /// The mode with its protocol when not toolgram's (`native@bfcl`), as charts label it.
    pub fn label(&self) -> String {
        mode_key(&self.mode, &self.protocol)
    }
}

fn rate(n: usize, of: usize) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

fn row(category: &str, rs: &[&ItemRecord]) -> Row {
    let n = rs.len();
    let mut runs: Vec<String> = rs.iter().filter_map(|r| r.run.clone()).collect();
    runs.sort();
    runs.dedup();
    let count = |f: &dyn Fn(&ItemRecord) -> bool| rs.iter().filter(|r| f(r)).count();
    let due: Vec<&&ItemRecord> = rs.iter().filter(|r| r.call_due).collect();
    let due_rate = |f: &dyn Fn(&ItemRecord) -> bool| {
        (!due.is_empty()).then(|| rate(due.iter().filter(|r| f(r)).count(), due.len()))
    };
    let replied = n - count(&|r| r.refused);
    let readable = count(&|r| r.parsed && !r.refused);
    let tokens: Vec<usize> = rs.iter().filter_map(|r| r.output_tokens).collect();
    let mut lat: Vec<f64> = rs.iter().map(|r| r.latency_ms).collect();
    lat.sort_by(f64::total_cmp);
    let p95 = lat
        .get(((lat.len() as f64 * 0.95).ceil() as usize).saturating_sub(1))
        .copied()
        .unwrap_or(0.0);
    Row {
        category: category.to_owned(),
        mode: rs.first().map(|r| r.mode.clone()).unwrap_or_default(),
        protocol: rs.first().map(|r| r.protocol.clone()).unwrap_or_default(),
        runs,
        n,
        accuracy: rate(count(&|r| r.correct), n),
        strict_accuracy: rate(count(&|r| r.correct && r.reason.is_none()), n),
        parsed: rate(count(&|r| r.parsed), replied),
        valid: rate(count(&|r| r.parsed && r.valid && !r.refused), readable),
        convergence: due_rate(&|r| r.called),
        first_tool_match: due_rate(&|r| r.first_tool_match),
        mean_tokens: (!tokens.is_empty())
            .then(|| tokens.iter().sum::<usize>() as f64 / tokens.len() as f64),
        mean_latency_ms: lat.iter().sum::<f64>() / n.max(1) as f64,
        p95_latency_ms: p95,
        attempts: rs.iter().map(|r| r.attempts).sum::<usize>() as f64 / n.max(1) as f64,
    }
}

/// Rows for `categories` × `modes` (in that order; pairs without records left out), then a
/// [`POOLED`] row per mode. A mode here is [`mode_key`]'s: the mode, and the protocol when it is
/// not toolgram's, so rows never pool two protocols.
pub fn rows(records: &[ItemRecord], categories: &[String], modes: &[String]) -> Vec<Row> {
    let mut out = Vec::new();
    let of_mode = |r: &ItemRecord, m: &String| &mode_key(&r.mode, &r.protocol) == m;
    for c in categories {
        for m in modes {
            let rs: Vec<&ItemRecord> = records
                .iter()
                .filter(|r| &r.category == c && of_mode(r, m))
                .collect();
            if !rs.is_empty() {
                out.push(row(c, &rs));
            }
        }
    }
    if categories.len() > 1 {
        for m in modes {
            let rs: Vec<&ItemRecord> = records
                .iter()
                .filter(|r| of_mode(r, m) && categories.contains(&r.category))
                .collect();
            if !rs.is_empty() {
                out.push(row(POOLED, &rs));
            }
        }
    }
    out
}

/// The run column: the one run, or how many (a row pooling several runs says so).
fn runs(r: &Row) -> String {
    match r.runs.as_slice() {
        [] => "–".into(),
        [one] => one.clone(),
        many => format!("{} runs", many.len()),
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |x| format!("{:.1}", x * 100.0))
}

/// The rows as a Markdown table (rates in %).
pub fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| category | mode | protocol | n | accuracy % | strict % | parsed % | valid % | convergence % | first tool % | mean tokens | mean ms | p95 ms | attempts | run |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.0} | {:.2} | {} |\n",
            r.category,
            r.mode,
            r.protocol,
            r.n,
            pct(Some(r.accuracy)),
            pct(Some(r.strict_accuracy)),
            pct(Some(r.parsed)),
            pct(Some(r.valid)),
            pct(r.convergence),
            pct(r.first_tool_match),
            r.mean_tokens.map_or("–".into(), |t| format!("{t:.1}")),
            r.mean_latency_ms,
            r.p95_latency_ms,
            r.attempts,
            runs(r),
        ));
    }
    s
}

/// The rows of `eval tools` as a Markdown table: the tool for the category, task success for
/// the accuracy (convergence and first-tool match say nothing when the call is required).
pub fn tools_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| tool | mode | n | success % | parsed % | valid % | attempts | mean tokens | mean ms | p95 ms |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.2} | {} | {:.0} | {:.0} |\n",
            r.category,
            r.mode,
            r.n,
            pct(Some(r.accuracy)),
            pct(Some(r.parsed)),
            pct(Some(r.valid)),
            r.attempts,
            r.mean_tokens.map_or("–".into(), |t| format!("{t:.1}")),
            r.mean_latency_ms,
            r.p95_latency_ms,
        ));
    }
    s
}

/// `results.json`: what ran, and the rows.
pub fn results_json(rows: &[Row], run: Value) -> Value {
    json!({"run": run, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, correct: bool, valid: bool, refused: bool) -> ItemRecord {
        ItemRecord {
            correct,
            refused,
            parsed: valid || !refused,
            valid,
            latency_ms: 10.0,
            attempts: 1,
            ..ItemRecord::new(id, "c", "grammar", true)
        }
    }

    /// An item whose tools were refused is a miss, but not a reply: it counts in accuracy and
    /// is left out of the parsed and valid rates.
    #[test]
    fn refused_tools_are_misses_but_not_replies() {
        let rs = [
            record("a", true, true, false),
            record("b", false, true, false),
            record("c", false, false, true),
        ];
        let rows = rows(&rs, &["c".into()], &["grammar".into()]);
        assert_eq!(rows[0].n, 3);
        assert!((rows[0].accuracy - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(rows[0].valid, 1.0);
        assert_eq!(rows[0].parsed, 1.0);
    }

    /// A reply cut off before its call ended is unreadable: it lowers `parsed`, and `valid`
    /// is counted on the replies that could be read.
    #[test]
    fn cut_off_replies_count_against_parsed_not_valid() {
        let mut cut = record("b", false, false, false);
        cut.parsed = false;
        let rs = [record("a", true, true, false), cut];
        let rows = rows(&rs, &["c".into()], &["grammar".into()]);
        assert!((rows[0].parsed - 0.5).abs() < 1e-9);
        assert_eq!(rows[0].valid, 1.0);
    }

    /// A refusal BFCL accepts from a run that ended in an error counts in `accuracy`, not in
    /// `strict_accuracy`.
    #[test]
    fn a_refusal_by_error_is_accurate_but_not_strict() {
        let clean = record("a", true, true, false);
        let mut by_error = record("b", true, true, false);
        by_error.reason = Some("truncated: generation stopped inside a tool call".into());
        let rows = rows(&[clean, by_error], &["c".into()], &["grammar".into()]);
        assert_eq!(rows[0].accuracy, 1.0);
        assert!((rows[0].strict_accuracy - 0.5).abs() < 1e-9);
    }
}
