//! A `bench compile` run's results aggregated per subset and overall ([`CompileSummary`]),
//! and written as the Markdown report people read ([`CompileSummary::markdown`]): schemas,
//! compiled and refused, valid instances accepted, invalid rejected, schemas passing, compile
//! time p50/p99, then the refusals by reason.
//!
//! This module must not compile or check schemas: it counts the results it is given.

use super::percentile;
use super::schema_result::SchemaResult;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One subset's row (or `ALL`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubsetRow {
    /// The subset, or `ALL`.
    pub subset: String,
    /// Schemas.
    pub schemas: usize,
    /// Schemas compiled.
    pub compiled: usize,
    /// Schemas passing ([`SchemaResult::passes`]).
    pub passing: usize,
    /// Valid instances accepted.
    pub valid_accepted: usize,
    /// Valid instances.
    pub valid: usize,
    /// Invalid instances rejected.
    pub invalid_rejected: usize,
    /// Invalid instances.
    pub invalid: usize,
    /// Median compile time of the schemas compiled (not in the JSON summary).
    #[serde(skip)]
    pub compile_ms_p50: f64,
    /// 99th-percentile compile time (not in the JSON summary).
    #[serde(skip)]
    pub compile_ms_p99: f64,
}

impl SubsetRow {
    fn of(subset: String, rs: &[&SchemaResult]) -> Self {
        let sum = |f: fn(&SchemaResult) -> usize| rs.iter().map(|r| f(r)).sum::<usize>();
        let mut times: Vec<f64> = rs
            .iter()
            .filter(|r| r.compiled)
            .map(|r| r.compile_ms)
            .collect();
        times.sort_by(f64::total_cmp);
        Self {
            subset,
            schemas: rs.len(),
            compiled: rs.iter().filter(|r| r.compiled).count(),
            passing: rs.iter().filter(|r| r.passes()).count(),
            valid_accepted: sum(|r| r.valid.0),
            valid: sum(|r| r.valid.1),
            invalid_rejected: sum(|r| r.invalid.0),
            invalid: sum(|r| r.invalid.1),
            compile_ms_p50: percentile(&times, 0.5),
            compile_ms_p99: percentile(&times, 0.99),
        }
    }
}

/// A run's results aggregated for its report.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileSummary {
    /// One row per subset (by name), then `ALL`.
    pub rows: Vec<SubsetRow>,
    /// Refusals counted by reason, most frequent first.
    pub refusals: Vec<(String, usize)>,
    /// Valid instances rejected only for the output policies (counted as passing).
    pub order_only: usize,
    /// Valid instances rejected by the post-parse validator.
    pub validator_rejected: usize,
    /// Schemas compiled by toolgram's own schema grammar where llguidance's `%json` refused.
    pub ir_fallbacks: usize,
    /// Unknown `format` values ignored (lenient), and in how many schemas.
    pub ignored_formats: (usize, usize),
    /// Unknown keywords ignored (lenient), and in how many schemas.
    pub ignored_keywords: (usize, usize),
}

impl CompileSummary {
    /// Aggregate `results` per subset and overall.
    pub fn of(results: &[SchemaResult]) -> Self {
        let mut by_subset: BTreeMap<String, Vec<&SchemaResult>> = BTreeMap::new();
        for r in results {
            by_subset.entry(r.subset.clone()).or_default().push(r);
        }
        let mut rows: Vec<SubsetRow> = by_subset
            .into_iter()
            .map(|(name, rs)| SubsetRow::of(name, &rs))
            .collect();
        rows.push(SubsetRow::of(
            "ALL".into(),
            &results.iter().collect::<Vec<_>>(),
        ));
        let mut refusals: BTreeMap<String, usize> = BTreeMap::new();
        for k in results.iter().filter_map(|r| r.refused_by.as_ref()) {
            *refusals.entry(k.clone()).or_default() += 1;
        }
        let mut refusals: Vec<(String, usize)> = refusals.into_iter().collect();
        refusals.sort_by_key(|r| std::cmp::Reverse(r.1));
        let total = |f: fn(&SchemaResult) -> usize| {
            let n: usize = results.iter().map(f).sum();
            (n, results.iter().filter(|r| f(r) > 0).count())
        };
        Self {
            rows,
            refusals,
            order_only: total(|r| r.out_of_order_valid_rejected).0,
            validator_rejected: total(|r| r.validator_rejected).0,
            ir_fallbacks: results.iter().filter(|r| r.ir_fallback).count(),
            ignored_formats: total(|r| r.ignored_formats),
            ignored_keywords: total(|r| r.ignored_keywords),
        }
    }
}

impl CompileSummary {
    /// The report: the per-subset table (Markdown), what the output policies and the
    /// validator changed, the schemas ignored formats and keywords touched (`lenient`: the
    /// run ignored them), and the 20 most frequent refusals.
    pub fn markdown(&self, lenient: bool) -> String {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                "–".to_owned()
            } else {
                format!("{:.1}", 100.0 * a as f64 / b as f64)
            }
        };
        let mut out = String::from(
            "| subset | schemas | compiled % | refused % | valid accepted % | invalid rejected % | passing | compile p50 / p99 ms |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
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
            );
        }
        let _ = writeln!(
            out,
            "\nvalid instances rejected only for key order or `1.0`-style integers (output policies; counted as passing): {}",
            self.order_only
        );
        let _ = writeln!(
            out,
            "valid instances rejected by the post-parse validator: {}",
            self.validator_rejected
        );
        if self.ir_fallbacks > 0 {
            let _ = writeln!(
                out,
                "compiled by toolgram's own schema grammar where llguidance's %json refused (the engine's fallback): {}",
                self.ir_fallbacks
            );
        }
        if lenient {
            let (formats, in_schemas) = self.ignored_formats;
            let (keywords, kw_schemas) = self.ignored_keywords;
            let _ = writeln!(
                out,
                "--lenient: {formats} unknown `format` values ignored in {in_schemas} schemas, {keywords} unknown keywords in {kw_schemas} schemas (each refused without --lenient)"
            );
        }
        out.push_str("refusals by reason (top 20):\n");
        for (k, n) in self.refusals.iter().take(20) {
            let _ = writeln!(out, "- {n} × {k}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(
        subset: &str,
        compiled: bool,
        valid: (usize, usize),
        invalid: (usize, usize),
    ) -> SchemaResult {
        SchemaResult {
            compiled,
            valid,
            invalid,
            ..SchemaResult::new(subset.into())
        }
    }

    #[test]
    fn passing_counts_policy_rejections_as_accepted() {
        let mut r = result("a", true, (1, 2), (3, 3));
        assert!(!r.passes());
        r.out_of_order_valid_rejected = 1;
        assert!(r.passes());
        r.invalid = (2, 3);
        assert!(!r.passes(), "an invalid instance accepted");
        assert!(!result("a", false, (0, 0), (0, 0)).passes(), "not compiled");
    }

    #[test]
    fn summary_rows_per_subset_then_all() {
        let mut refused = result("b", false, (0, 0), (0, 0));
        refused.refused_by = Some("unknown keyword `x`".into());
        let mut refused2 = refused.clone();
        refused2.subset = "a".into();
        let mut other = refused.clone();
        other.refused_by = Some("validator: bad".into());
        let mut slow = result("b", true, (2, 2), (1, 1));
        slow.compile_ms = 9.0;
        slow.ignored_formats = 2;
        let mut fast = result("a", true, (1, 2), (0, 1));
        fast.compile_ms = 1.0;
        fast.validator_rejected = 1;
        let s = CompileSummary::of(&[slow, refused, fast, refused2, other]);
        let names: Vec<&str> = s.rows.iter().map(|r| r.subset.as_str()).collect();
        assert_eq!(names, ["a", "b", "ALL"]);
        let all = &s.rows[2];
        assert_eq!((all.schemas, all.compiled, all.passing), (5, 2, 1));
        assert_eq!((all.valid_accepted, all.valid), (3, 4));
        assert_eq!((all.invalid_rejected, all.invalid), (1, 2));
        assert_eq!((all.compile_ms_p50, all.compile_ms_p99), (9.0, 9.0));
        assert_eq!(
            s.rows[0].compile_ms_p50, 1.0,
            "refused schemas have no compile time"
        );
        assert_eq!(
            s.refusals,
            vec![
                ("unknown keyword `x`".to_owned(), 2),
                ("validator: bad".to_owned(), 1)
            ]
        );
        assert_eq!((s.validator_rejected, s.ignored_formats), (1, (2, 1)));
        let json = serde_json::to_value(all).expect("serializes");
        assert!(
            json.get("compile_ms_p50").is_none(),
            "the summary keys stay as they were"
        );
    }

    #[test]
    fn markdown_has_a_row_per_subset_and_the_refusals() {
        let mut refused = result("b", false, (0, 0), (0, 0));
        refused.refused_by = Some("unknown keyword `x`".into());
        let text =
            CompileSummary::of(&[result("a", true, (1, 2), (1, 1)), refused]).markdown(false);
        assert!(
            text.contains("| a | 1 | 100.0 | 0.0 | 50.0 | 100.0 | 0 |"),
            "{text}"
        );
        assert!(text.contains("| ALL | 2 | 50.0 | 50.0 |"), "{text}");
        assert!(text.contains("- 1 × unknown keyword `x`"), "{text}");
        assert!(!text.contains("--lenient"), "{text}");
    }
}
