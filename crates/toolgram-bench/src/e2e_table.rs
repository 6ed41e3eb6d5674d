//! The `bench e2e` report as text for people: one line per request — where its prompt came
//! from, what was sampled and forced, its time beside its peers and its limit.
//!
//! This module must not measure: it writes the rows it is given.

use crate::e2e::RequestRow;
use std::fmt::Write;

/// The table, a header line then one line per row.
pub fn table(rows: &[RequestRow]) -> String {
    let mut out = format!(
        "{:<9} {:<8} {:>5} {:>6} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8} {:>5} {:>3}\n",
        "pool",
        "choice",
        "eval",
        "cached",
        "sampled",
        "forced",
        "ms",
        "free ms",
        "llama ms",
        "limit ms",
        "valid",
        "ff="
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<9} {:<8} {:>5} {:>6} {:>7} {:>6} {:>8.0} {:>8.0} {:>8.0} {:>8.0} {:>5} {:>3}",
            r.pool,
            r.tool_choice,
            r.prompt_evaluated,
            r.prompt_cached,
            r.sampled,
            r.forced,
            r.e2e_ms,
            r.unconstrained_ms,
            r.llama_server_warm_ms,
            r.limit_ms,
            r.valid,
            if r.ff_identical { "yes" } else { "NO" }
        );
    }
    out
}
