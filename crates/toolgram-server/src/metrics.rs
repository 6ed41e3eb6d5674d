//! Counters for `GET /metrics`, in Prometheus' text format: requests by route and status,
//! queue depth, tokens, prompt-cache hits, calls and valid calls, retries. This module must
//! not block a request: counters are atomics, the per-route table one short lock.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use toolgram_runtime::{Response, RunError, Runtime};

/// The server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    prompt_tokens: AtomicU64,
    cached_prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    replies: AtomicU64,
    replies_with_calls: AtomicU64,
    tool_calls: AtomicU64,
    retries: AtomicU64,
    no_valid_call: AtomicU64,
    disconnects: AtomicU64,
}

impl Metrics {
    /// Count a finished request.
    pub fn request(&self, route: &str, status: u16) {
        let mut map = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry((route.to_owned(), status)).or_default() += 1;
    }

    /// Count a reply's tokens, calls and retries.
    pub fn reply(&self, r: &Response) {
        if let Some(u) = r.usage {
            self.prompt_tokens
                .fetch_add(u.prompt_tokens as u64, Ordering::Relaxed);
            self.cached_prompt_tokens
                .fetch_add(u.cached_prompt_tokens as u64, Ordering::Relaxed);
            self.completion_tokens
                .fetch_add(u.completion_tokens as u64, Ordering::Relaxed);
        }
        self.replies.fetch_add(1, Ordering::Relaxed);
        if !r.tool_calls.is_empty() {
            self.replies_with_calls.fetch_add(1, Ordering::Relaxed);
        }
        self.tool_calls
            .fetch_add(r.tool_calls.len() as u64, Ordering::Relaxed);
        self.retries
            .fetch_add(r.attempts.saturating_sub(1) as u64, Ordering::Relaxed);
    }

    /// Count a failed run (those whose every attempt failed validation are counted apart).
    pub fn failed(&self, e: &RunError) {
        if matches!(e.kind(), "no_valid_call" | "retry_blocked") {
            self.no_valid_call.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Count a streaming client that went away before its reply ended (its run is cancelled).
    pub fn disconnect(&self) {
        self.disconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// The exposition text.
    pub fn render(&self, runtime: &Runtime) -> String {
        let mut out = String::new();
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "# HELP toolgram_requests_total HTTP requests by route and status."
        );
        let _ = writeln!(out, "# TYPE toolgram_requests_total counter");
        let map = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        for ((route, status), n) in map.iter() {
            let _ = writeln!(
                out,
                "toolgram_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        drop(map);
        let gauges = [
            (
                "toolgram_queue_depth",
                "Requests waiting for the engine.",
                "gauge",
                runtime.queue_depth() as u64,
            ),
            (
                "toolgram_prompt_tokens_total",
                "Prompt tokens, cached ones included.",
                "counter",
                get(&self.prompt_tokens),
            ),
            (
                "toolgram_cached_prompt_tokens_total",
                "Prompt tokens served from the prefix cache.",
                "counter",
                get(&self.cached_prompt_tokens),
            ),
            (
                "toolgram_completion_tokens_total",
                "Generated tokens.",
                "counter",
                get(&self.completion_tokens),
            ),
            (
                "toolgram_prompt_cache_hits_total",
                "Requests whose prefix was cached.",
                "counter",
                runtime.cache_stats().map_or(0, |s| s.hits()),
            ),
            (
                "toolgram_prompt_cache_misses_total",
                "Requests whose prefix was evaluated.",
                "counter",
                runtime.cache_stats().map_or(0, |s| s.misses()),
            ),
            (
                "toolgram_replies_total",
                "Validated replies.",
                "counter",
                get(&self.replies),
            ),
            (
                "toolgram_replies_with_calls_total",
                "Validated replies with tool calls.",
                "counter",
                get(&self.replies_with_calls),
            ),
            (
                "toolgram_tool_calls_total",
                "Validated tool calls.",
                "counter",
                get(&self.tool_calls),
            ),
            (
                "toolgram_retries_total",
                "Attempts sent back to the model with errors.",
                "counter",
                get(&self.retries),
            ),
            (
                "toolgram_client_disconnects_total",
                "Streams whose client went away; their runs were cancelled.",
                "counter",
                get(&self.disconnects),
            ),
            (
                "toolgram_no_valid_call_total",
                "Requests with no valid reply after the retries.",
                "counter",
                get(&self.no_valid_call),
            ),
        ];
        for (name, help, kind, value) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
        let (valid, failed) = (get(&self.replies), get(&self.no_valid_call));
        let rate = if valid + failed == 0 {
            1.0
        } else {
            valid as f64 / (valid + failed) as f64
        };
        let _ = writeln!(
            out,
            "# HELP toolgram_valid_reply_ratio Validated replies over replies and no-valid-call failures.\n# TYPE toolgram_valid_reply_ratio gauge\ntoolgram_valid_reply_ratio {rate}"
        );
        out
    }
}
