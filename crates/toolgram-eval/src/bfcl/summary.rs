//! BFCL's own summary of a run, the figure its leaderboard shows: per mode, *simple* is the
//! unweighted mean of `simple_python`, `simple_java` and `simple_javascript`, and the **non-live
//! overall** is the unweighted mean of simple, `multiple`, `parallel` and `parallel_multiple`
//! (bfcl-eval's `calculate_unweighted_accuracy` over those groups); `irrelevance` stands beside
//! it, outside the mean. A group lacking one of its categories has no figure, so a partial run
//! never shows a number BFCL would not.
//!
//! This module must not score items or pool them by item (the report's `all` row does that, and
//! is labelled as toolgram's own).

use crate::report::Row;
use serde::Serialize;

/// The three languages BFCL averages into *simple*.
const SIMPLE: [&str; 3] = ["simple_python", "simple_java", "simple_javascript"];

/// BFCL's summary for one mode (rates in 0..1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The mode, with its protocol when not toolgram's ([`Row::label`]).
    pub mode: String,
    /// Mean of the three simple languages.
    pub simple: Option<f64>,
    /// `multiple`.
    pub multiple: Option<f64>,
    /// `parallel`.
    pub parallel: Option<f64>,
    /// `parallel_multiple`.
    pub parallel_multiple: Option<f64>,
    /// BFCL's non-live overall: the mean of the four groups above.
    pub non_live: Option<f64>,
    /// `irrelevance` (beside the overall, not in it).
    pub irrelevance: Option<f64>,
}

/// The unweighted mean of `xs`, or `None` when one is missing.
fn mean(xs: &[Option<f64>]) -> Option<f64> {
    let all: Option<Vec<f64>> = xs.iter().copied().collect();
    all.filter(|v| !v.is_empty())
        .map(|v| v.iter().sum::<f64>() / v.len() as f64)
}

/// One summary per mode of `rows`, in the order the modes first appear.
pub fn summaries(rows: &[Row]) -> Vec<Summary> {
    let mut modes: Vec<String> = Vec::new();
    for r in rows {
        if !modes.contains(&r.label()) {
            modes.push(r.label());
        }
    }
    modes
        .into_iter()
        .map(|mode| {
            let acc = |category: &str| {
                rows.iter()
                    .find(|r| r.label() == mode && r.category == category)
                    .map(|r| r.accuracy)
            };
            let simple = mean(&SIMPLE.map(acc));
            let (multiple, parallel, parallel_multiple) =
                (acc("multiple"), acc("parallel"), acc("parallel_multiple"));
            Summary {
                non_live: mean(&[simple, multiple, parallel, parallel_multiple]),
                irrelevance: acc("irrelevance"),
                mode,
                simple,
                multiple,
                parallel,
                parallel_multiple,
            }
        })
        .collect()
}

/// The summaries as a Markdown table (%), BFCL's overall first.
pub fn table(summaries: &[Summary]) -> String {
    let pct = |x: Option<f64>| x.map_or("–".into(), |x| format!("{:.1}", x * 100.0));
    let mut s = String::from(
        "| mode | BFCL non-live overall | simple | multiple | parallel | parallel_multiple | irrelevance |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for m in summaries {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            m.mode,
            pct(m.non_live),
            pct(m.simple),
            pct(m.multiple),
            pct(m.parallel),
            pct(m.parallel_multiple),
            pct(m.irrelevance),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(category: &str, mode: &str, accuracy: f64) -> Row {
        Row {
            category: category.into(),
            mode: mode.into(),
            protocol: "toolgram".into(),
            runs: vec![],
            n: 1,
            accuracy,
            strict_accuracy: accuracy,
            parsed: 1.0,
            valid: 1.0,
            convergence: None,
            first_tool_match: None,
            mean_tokens: None,
            mean_latency_ms: 0.0,
            p95_latency_ms: 0.0,
            attempts: 1.0,
        }
    }

    /// The figures BFCL's own handler and checker gave through `toolgram serve` (issue 51):
    /// its formula makes 32.2, where the item-weighted pool of the same rows is 44.1.
    #[test]
    fn the_overall_is_the_mean_of_the_four_groups_with_simple_averaged_by_language() {
        let rows = [
            row("simple_python", "grammar", 0.7475),
            row("simple_java", "grammar", 0.40),
            row("simple_javascript", "grammar", 0.48),
            row("multiple", "grammar", 0.745),
            row("parallel", "grammar", 0.0),
            row("parallel_multiple", "grammar", 0.0),
            row("irrelevance", "grammar", 0.4208),
        ];
        let s = &summaries(&rows)[0];
        assert!((s.simple.unwrap() - 0.5425).abs() < 1e-9);
        assert!((s.non_live.unwrap() - 0.3219).abs() < 1e-4);
        assert_eq!(s.irrelevance, Some(0.4208));
        assert!(
            table(&summaries(&rows))
                .contains("| grammar | 32.2 | 54.2 | 74.5 | 0.0 | 0.0 | 42.1 |")
        );
    }

    #[test]
    fn a_missing_category_leaves_its_group_and_the_overall_without_a_figure() {
        let rows = [
            row("simple_python", "prompt", 0.8),
            row("multiple", "prompt", 0.7),
            row("parallel", "prompt", 0.5),
            row("parallel_multiple", "prompt", 0.4),
        ];
        let s = &summaries(&rows)[0];
        assert_eq!((s.simple, s.non_live), (None, None));
        assert_eq!(s.multiple, Some(0.7));
    }
}
