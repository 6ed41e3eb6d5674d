//! Counters for `GET /metrics`, in Prometheus' text format: requests by route and status
//! (a client that hung up before its reply is `499`), queue depth, tokens, prompt-cache hits
//! and misses (a hit is a reply with cached prompt tokens, so the two agree by construction),
//! calls and valid calls, retries, connections refused over the cap, the stored Responses and
//! their bytes, per model its load state (loaded, loads, unloads, the last load's seconds,
//! requests waiting for it, its queue) and its replies and tokens, and per route the latency
//! histograms of queue wait, time to the first token
//! and the whole request. This module must not block a request: counters are
//! atomics, the per-route tables one short lock.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use toolgram_runtime::{ModelSet, Response, RunError, Usage};

/// The status a request gets in `requests_total` when its client went away before the reply
/// (nginx's convention).
pub const CLIENT_CLOSED: u16 = 499;

/// Histogram bucket bounds, in seconds.
const BUCKETS: [f64; 12] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// One histogram: a count per bucket (not cumulative), the sum and the count.
#[derive(Debug, Default, Clone)]
struct Histogram {
    buckets: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(i) = BUCKETS.iter().position(|b| seconds <= *b) {
            self.buckets[i] += 1;
        }
        self.sum += seconds;
        self.count += 1;
    }
}

/// The latencies kept per route.
const LATENCIES: [(&str, &str); 3] = [
    (
        "toolgram_queue_wait_seconds",
        "Time a request waited for the engine.",
    ),
    (
        "toolgram_time_to_first_token_seconds",
        "Time from the request to its first streamed delta (the whole reply when not streamed).",
    ),
    (
        "toolgram_request_duration_seconds",
        "Time from the request to its last token: queue wait and the run.",
    ),
];

/// When a stream's first delta went out, counted from the stream's start.
#[derive(Debug)]
pub struct StreamClock {
    started: std::time::Instant,
    first: Option<f64>,
}

impl StreamClock {
    /// A clock started now.
    pub fn start() -> Self {
        Self {
            started: std::time::Instant::now(),
            first: None,
        }
    }

    /// Note `event`: the first delta (text, reasoning or a call) stops the clock.
    pub fn seen(&mut self, event: &toolgram_runtime::Event) {
        use toolgram_runtime::Event::{ContentDelta, ReasoningDelta, ToolCallStart};
        if self.first.is_none()
            && matches!(
                event,
                ContentDelta(_) | ReasoningDelta(_) | ToolCallStart { .. }
            )
        {
            self.first = Some(self.started.elapsed().as_secs_f64());
        }
    }

    /// Seconds to the first delta; the whole stream when there was none.
    pub fn first_token(&self) -> f64 {
        self.first
            .unwrap_or_else(|| self.started.elapsed().as_secs_f64())
    }
}

/// The server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    latencies: Mutex<BTreeMap<(usize, String), Histogram>>,
    /// Per model: replies, completion tokens.
    by_model: Mutex<BTreeMap<String, (u64, u64)>>,
    prompt_tokens: AtomicU64,
    cached_prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    cache_hits: AtomicU64,
    cache_misses: AtomicU64,
    replies: AtomicU64,
    replies_with_calls: AtomicU64,
    tool_calls: AtomicU64,
    retries: AtomicU64,
    no_valid_call: AtomicU64,
    disconnects: AtomicU64,
    refused_connections: AtomicU64,
    cancelled_prompt_tokens: AtomicU64,
    cancelled_completion_tokens: AtomicU64,
}

impl Metrics {
    /// Count a finished request.
    pub fn request(&self, route: &str, status: u16) {
        let mut map = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry((route.to_owned(), status)).or_default() += 1;
    }

    /// Count a reply on `route` from `model`: its tokens, cache use, calls and retries, and
    /// its latencies (`first_token`: seconds from the request to its first streamed delta;
    /// `None` when not streamed, where it is the whole request).
    pub fn reply(&self, route: &str, model: &str, r: &Response, first_token: Option<f64>) {
        if let Some(u) = r.usage {
            self.tokens(u);
        }
        let mut by_model = self.by_model.lock().unwrap_or_else(|e| e.into_inner());
        let counts = by_model.entry(model.to_owned()).or_default();
        counts.0 += 1;
        counts.1 += r.usage.map_or(0, |u| u.completion_tokens as u64);
        drop(by_model);
        let t = &r.timings;
        let (queue, total) = (t.queue_ms / 1e3, (t.queue_ms + t.total_ms) / 1e3);
        let mut lat = self.latencies.lock().unwrap_or_else(|e| e.into_inner());
        for (i, seconds) in [queue, first_token.unwrap_or(total), total]
            .into_iter()
            .enumerate()
        {
            lat.entry((i, route.to_owned()))
                .or_default()
                .observe(seconds);
        }
        drop(lat);
        self.replies.fetch_add(1, Ordering::Relaxed);
        if !r.tool_calls.is_empty() {
            self.replies_with_calls.fetch_add(1, Ordering::Relaxed);
        }
        self.tool_calls
            .fetch_add(r.tool_calls.len() as u64, Ordering::Relaxed);
        self.retries
            .fetch_add(r.attempts.saturating_sub(1) as u64, Ordering::Relaxed);
    }

    /// Count the tokens and cache use of one reply (a reply cut inside a call included).
    pub fn tokens(&self, u: Usage) {
        self.add_tokens(u);
        let cache = if u.cached_prompt_tokens > 0 {
            &self.cache_hits
        } else {
            &self.cache_misses
        };
        cache.fetch_add(1, Ordering::Relaxed);
    }

    fn add_tokens(&self, u: Usage) {
        self.prompt_tokens
            .fetch_add(u.prompt_tokens as u64, Ordering::Relaxed);
        self.cached_prompt_tokens
            .fetch_add(u.cached_prompt_tokens as u64, Ordering::Relaxed);
        self.completion_tokens
            .fetch_add(u.completion_tokens as u64, Ordering::Relaxed);
    }

    /// Count a failed run: a cut one's tokens; those whose every attempt failed validation
    /// apart. A cancelled run is counted by [`Metrics::cancelled`].
    pub fn failed(&self, e: &RunError) {
        if let Some(u) = e.usage().filter(|_| e.kind() != "cancelled") {
            self.tokens(u);
        }
        if matches!(e.kind(), "no_valid_call" | "retry_blocked") {
            self.no_valid_call.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Count the tokens of a run cancelled while it decoded (its client went away or its time
    /// ran out), whose reply nobody reads: in the totals, and apart. It is no reply, so not a
    /// cache hit or miss.
    pub fn cancelled(&self, e: &RunError) {
        if let Some(u) = e.usage().filter(|_| e.kind() == "cancelled") {
            self.add_tokens(u);
            self.cancelled_prompt_tokens
                .fetch_add(u.prompt_tokens as u64, Ordering::Relaxed);
            self.cancelled_completion_tokens
                .fetch_add(u.completion_tokens as u64, Ordering::Relaxed);
        }
    }

    /// Count a client that went away before its reply ended, streamed or not (its run is
    /// cancelled).
    pub fn disconnect(&self) {
        self.disconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// Count a connection refused over `--max-connections`.
    pub fn refused_connection(&self) {
        self.refused_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// The exposition text; `stored`: the stored Responses and the bytes they hold.
    pub fn render(&self, models: &ModelSet, stored: (usize, usize)) -> String {
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
                "Requests waiting for an engine, every model's together (and for a model to load).",
                "gauge",
                models
                    .states()
                    .iter()
                    .map(|s| s.waiting + s.runtime.as_ref().map_or(0, |r| r.queue_depth()))
                    .sum::<usize>() as u64,
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
                "toolgram_cancelled_prompt_tokens_total",
                "Prompt tokens of runs cancelled while decoding (client gone, timeout); in the prompt total too.",
                "counter",
                get(&self.cancelled_prompt_tokens),
            ),
            (
                "toolgram_cancelled_completion_tokens_total",
                "Tokens generated by runs cancelled while decoding (client gone, timeout); in the completion total too.",
                "counter",
                get(&self.cancelled_completion_tokens),
            ),
            (
                "toolgram_prompt_cache_hits_total",
                "Replies some of whose prompt tokens came from the prefix cache.",
                "counter",
                get(&self.cache_hits),
            ),
            (
                "toolgram_prompt_cache_misses_total",
                "Replies whose whole prompt was evaluated.",
                "counter",
                get(&self.cache_misses),
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
                "Clients that went away before their reply ended, streamed or not; their runs were cancelled.",
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
        write_values(&mut out, &gauges);
        self.render_server(&mut out, stored);
        self.render_models(&mut out, models);
        self.render_latencies(&mut out);
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

    /// The connections refused, and the stored Responses and their bytes.
    fn render_server(&self, out: &mut String, stored: (usize, usize)) {
        write_values(
            out,
            &[
                (
                    "toolgram_connections_refused_total",
                    "Connections answered 503 and closed: --max-connections were open.",
                    "counter",
                    self.refused_connections.load(Ordering::Relaxed),
                ),
                (
                    "toolgram_stored_responses",
                    "Responses stored for previous_response_id.",
                    "gauge",
                    stored.0 as u64,
                ),
                (
                    "toolgram_stored_response_bytes",
                    "Bytes the stored responses hold (their JSON), within --max-stored-bytes.",
                    "gauge",
                    stored.1 as u64,
                ),
            ],
        );
    }

    /// Per model, labelled `model`: its load state and queue, the call grammars it compiled, and
    /// its replies and tokens.
    fn render_models(&self, out: &mut String, models: &ModelSet) {
        let states = models.states();
        let by_model = self.by_model.lock().unwrap_or_else(|e| e.into_inner());
        let counted = |id: &str| by_model.get(id).copied().unwrap_or_default();
        let families: [Family<'_>; 9] = [
            (
                "toolgram_model_loaded",
                "1 when the model is loaded.",
                "gauge",
                &|s| f64::from(u8::from(s.runtime.is_some())),
            ),
            (
                "toolgram_model_queue_depth",
                "Requests waiting for the model's engine.",
                "gauge",
                &|s| s.runtime.as_ref().map_or(0, |r| r.queue_depth()) as f64,
            ),
            (
                "toolgram_model_loading_waiters",
                "Requests waiting for the model to load.",
                "gauge",
                &|s| s.waiting as f64,
            ),
            (
                "toolgram_model_loads_total",
                "Times the model was loaded.",
                "counter",
                &|s| s.loads as f64,
            ),
            (
                "toolgram_model_unloads_total",
                "Times the model was unloaded for another (--max-loaded).",
                "counter",
                &|s| s.unloads as f64,
            ),
            (
                "toolgram_model_load_seconds",
                "How long the model's last load took.",
                "gauge",
                &|s| s.last_load.map_or(0.0, |d| d.as_secs_f64()),
            ),
            (
                "toolgram_model_call_grammars_compiled_total",
                "Call grammars the model's engine compiled since it was loaded: one per request with tools, however many attempts and stream readers (0 behind a provider).",
                "counter",
                &|s| {
                    let stats = s.runtime.as_ref().and_then(|r| r.grammar_stats());
                    stats.map_or(0, |g| g.calls_compiled) as f64
                },
            ),
            (
                "toolgram_model_replies_total",
                "Validated replies from the model.",
                "counter",
                &|s| counted(&s.id).0 as f64,
            ),
            (
                "toolgram_model_completion_tokens_total",
                "Tokens the model generated in validated replies.",
                "counter",
                &|s| counted(&s.id).1 as f64,
            ),
        ];
        for (name, help, kind, value) in families {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for s in &states {
                let id = s.id.replace('\\', "\\\\").replace('"', "\\\"");
                let _ = writeln!(out, "{name}{{model=\"{id}\"}} {}", value(s));
            }
        }
    }

    fn render_latencies(&self, out: &mut String) {
        let lat = self.latencies.lock().unwrap_or_else(|e| e.into_inner());
        for (i, (name, help)) in LATENCIES.iter().enumerate() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
            for ((_, route), h) in lat.range((i, String::new())..(i + 1, String::new())) {
                let mut cumulative = 0;
                for (bound, n) in BUCKETS.iter().zip(h.buckets) {
                    cumulative += n;
                    let _ = writeln!(
                        out,
                        "{name}_bucket{{route=\"{route}\",le=\"{bound}\"}} {cumulative}"
                    );
                }
                let _ = writeln!(
                    out,
                    "{name}_bucket{{route=\"{route}\",le=\"+Inf\"}} {}\n{name}_sum{{route=\"{route}\"}} {}\n{name}_count{{route=\"{route}\"}} {}",
                    h.count, h.sum, h.count
                );
            }
        }
    }
}

/// A per-model family: name, help, type, and its value for one model.
type Family<'a> = (
    &'static str,
    &'static str,
    &'static str,
    &'a dyn Fn(&toolgram_runtime::ModelState) -> f64,
);

/// Counters and gauges of one value each: name, help, type, value.
fn write_values(out: &mut String, values: &[(&str, &str, &str, u64)]) {
    for (name, help, kind, value) in values {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    }
}
