//! # toolgram-bench — what does each stage cost, against its peers?
//!
//! The benchmarks behind `toolgram bench`: each takes typed options, runs, and returns a
//! result struct (serde `Serialize`, the keys the CLI prints). Accuracy is `toolgram-eval`'s;
//! this crate measures time, tokens and coverage.
//!
//! Contents:
//! - [`call`] — one request constrained and unconstrained: mask µs per token, ms per token;
//! - [`compile`] — JSON-Schema coverage and correctness on MaskBench or the
//!   JSON-Schema-Test-Suite, per target ([`compile::Target`]), scored per subset;
//! - [`mask`] — mask time per token, llguidance against llama.cpp's GBNF sampler;
//! - [`tools`] — tokens of each grammar tool's grammar form against its JSON forms;
//! - [`server_call`] — one tool call end to end, the embedded engine against llama-server;
//! - [`concurrent`] — throughput with concurrent clients, `toolgram serve` (continuous
//!   batching) against llama-server `-np N`;
//! - [`inputs`] — the tools and prompts files a benchmark reads;
//! - [`peers`] — the servers a benchmark runs side by side and the settings they share;
//! - [`e2e`] — one tool call end to end beside its peers and its limit, in one run: the
//!   ratios of docs/benchmarks.md; [`e2e_chart`] draws where its time goes, [`e2e_table`]
//!   writes its rows as text;
//!
//! Measurements only: nothing here decides pass/fail of a test, and nothing here prints
//! (progress is reported through callbacks; the CLI prints).

#![deny(missing_docs)]

pub mod call;
mod child_server;
pub mod compile;
mod compile_gbnf;
mod compile_summary;
pub mod concurrent;
pub mod datasets;
pub mod e2e;
pub mod e2e_chart;
pub mod e2e_table;
pub mod inputs;
mod key_order;
pub mod mask;
pub mod peers;
mod schema_result;
pub mod server_call;
pub mod tools;

mod error;
pub use error::BenchError;

/// The value at quantile `p` (0…1) of `sorted` (nearest rank, rounding half up); the
/// default (zero) when it is empty.
pub fn percentile<T: Copy + Default>(sorted: &[T], p: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The mean of `v`; zero when it is empty.
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// `x` rounded to `digits` decimals (for reports read by people).
pub(crate) fn round_to(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_nearest_rank() {
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.0), 1);
        assert_eq!(percentile(&v, 0.5), 51, "index 49.5 rounds up to 50");
        assert_eq!(percentile(&v, 0.99), 99);
        assert_eq!(percentile(&v, 1.0), 100);
        assert_eq!(percentile(&[7.5f64], 0.99), 7.5);
    }

    #[test]
    fn empty_inputs_are_zero_not_a_panic() {
        assert_eq!(percentile::<u32>(&[], 0.5), 0);
        assert_eq!(percentile::<f64>(&[], 0.99), 0.0);
        assert_eq!(mean(&[]), 0.0);
    }

    #[test]
    fn mean_and_rounding() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
        assert_eq!(round_to(1.23456, 1), 1.2);
        assert_eq!(round_to(128.3849, 2), 128.38);
    }
}
