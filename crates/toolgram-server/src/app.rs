//! The server's shared state: the models (each one runtime for every request naming it, so
//! its session cache is shared; loaded on first use), the settings (checked at start: [`ServerConfig::check`]), the counters, and the
//! Responses store, bounded by the bytes it holds. This module must not handle requests.

use crate::error::ApiError;
use crate::metrics::Metrics;
use axum::http::StatusCode;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{Semaphore, watch};
use toolgram_core::ChatMessage;
use toolgram_core::define::request::Plan;
use toolgram_runtime::{ModelSet, Response, RunError, Runtime, ToolSources};

/// Most ballots one request may ask for unless the operator says otherwise: about what the
/// default queue (4 running, 16 waiting) can admit beside other clients.
pub const DEFAULT_MAX_VOTES: usize = 8;

/// The reply limit in front of a provider when `--max-tokens` names none (a provider keeps
/// its own context).
pub const DEFAULT_PROVIDER_MAX_TOKENS: usize = 4096;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind.
    pub host: String,
    /// Port (0: any free port).
    pub port: u16,
    /// Clients must send `Authorization: Bearer <key>` when set.
    pub api_key: Option<String>,
    /// Largest request body in bytes (413 above).
    pub max_body_bytes: usize,
    /// Longest a request may take, from its arrival: loading its model, its check, its wait
    /// in the queue and its run under one deadline (504 past it).
    pub timeout: Timeout,
    /// Stored Responses kept for `previous_response_id`.
    pub max_stored_responses: usize,
    /// Bytes the stored Responses may hold together (their JSON), oldest dropped first; a
    /// response over a quarter of it is answered but not stored.
    pub max_stored_bytes: usize,
    /// Connections open at once; one more is answered 503 and closed.
    pub max_connections: usize,
    /// Longest a client may take to send a request's headers, and longest a kept-alive
    /// connection may sit idle (the connection is closed past it).
    pub header_read_timeout: Duration,
    /// Longest a client may take to send a request's body (408 past it).
    pub body_read_timeout: Duration,
    /// Longest a write to a client may wait (its socket full: a client that stopped reading);
    /// the connection is closed past it, and its run cancelled.
    pub write_timeout: Duration,
    /// On SIGTERM or Ctrl-C, how long requests in flight get to finish; then their
    /// connections are closed and their runs cancelled.
    pub drain_timeout: Duration,
    /// The most tokens a reply is given (a request asking for more is capped, and the reply
    /// says so; one naming none gets [`DEFAULT_MAX_TOKENS`] or this if lower).
    /// 0: each model's context ([`App::served`] reads it from its runtime), so an agent's own
    /// limit is honoured wherever the prompt leaves room (the engine never decodes past the
    /// context).
    pub max_tokens: usize,
    /// Answer a model name that is neither a served id nor an alias with a 404, instead of
    /// serving it with the default model (as llama-server does).
    pub strict_model_names: bool,
    /// What to do with hosted tools (`web_search`, …) this server cannot run.
    pub hosted_tools: HostedTools,
    /// Most calls one reply may make under `parallel_tool_calls` (`None`: unbounded).
    pub max_calls_per_reply: Option<usize>,
    /// Plan, then calls by default (a request's `plan` field overrides it): where several
    /// calls may be made, a reply that calls first states how many, then makes exactly that
    /// many (`Plan::Calls`, the default; docs/eval.md, "Right by default").
    pub plan: Plan,
    /// Added to the logits of a call's opening tokens where a reply may call or not, by
    /// default (a request's `call_bias` field overrides it; -100 to 100); `None`: the
    /// runtime's default (`Sampling::call_bias`).
    pub call_bias: Option<f32>,
    /// Added to a plan's counts of more than one call at its count, by default (a request's
    /// `count_bias` field overrides it; -100 to 100); `None`: the runtime's default
    /// (`Sampling::count_bias`).
    pub count_bias: Option<f32>,
    /// Ballots per reply by default (a request's `votes` field overrides it): the answer
    /// most of them give is returned.
    pub votes: usize,
    /// Most ballots one request may ask for (a request's ballots are admitted to the queue
    /// together or not at all).
    pub max_votes: usize,
    /// What a call identical to one already made in the conversation gets (a request's
    /// `repeats` field overrides it).
    pub repeats: toolgram_runtime::Repeats,
    /// Stop a reply whose free text repeats itself verbatim (a request's `repeated_text`
    /// field, `stop` or `keep`, overrides it; `Sampling::stop_repeated_text`).
    pub stop_repeated_text: bool,
    /// Refuse tools whose schemas use keywords toolgram does not know, instead of taking them
    /// as annotations listed in `toolgram.warnings` (a request's `strict_schemas` field
    /// overrides it).
    pub strict_schemas: bool,
    /// Most replies whose calls a request's MCP tool loop runs before it answers with the
    /// last one (its calls unrun, `toolgram.pending_calls`).
    pub max_steps: usize,
}

/// What a request's hosted tools (run by a vendor's servers, not by the client) get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostedTools {
    /// Left out of the model's pool and listed in the reply's `toolgram.filtered_out`.
    #[default]
    Filter,
    /// A 400 naming the tool.
    Refuse,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 8080,
            api_key: None,
            max_body_bytes: 4 << 20,
            timeout: Timeout::Sized,
            max_stored_responses: 256,
            max_stored_bytes: 64 << 20,
            max_connections: 256,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            drain_timeout: Duration::from_secs(30),
            max_tokens: 0,
            strict_model_names: false,
            hosted_tools: HostedTools::Filter,
            max_calls_per_reply: Some(8),
            plan: Plan::Calls,
            call_bias: None,
            count_bias: None,
            votes: 1,
            max_votes: DEFAULT_MAX_VOTES,
            repeats: toolgram_runtime::Repeats::Forbid,
            stop_repeated_text: true,
            strict_schemas: false,
            max_steps: toolgram_runtime::DEFAULT_MAX_STEPS,
        }
    }
}

/// A setting the server cannot start with.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// An API key that is empty (`--api-key ""`, `TOOLGRAM_API_KEY=""`): it would let a client
    /// that sends an empty key in.
    #[error(
        "the API key is empty (--api-key \"\" or TOOLGRAM_API_KEY=\"\"): give a key, or none to serve without one"
    )]
    EmptyApiKey,
    /// A limit of zero that would refuse every request.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// Default ballots above the bound on ballots.
    #[error("--votes {votes} is above --max-votes {max}")]
    VotesOverMax {
        /// `--votes`.
        votes: usize,
        /// `--max-votes`.
        max: usize,
    },
    /// A bound on ballots above what the runtime casts.
    #[error("--max-votes must be from 1 to {0}")]
    MaxVotes(usize),
}

impl ServerConfig {
    /// Refuse settings the server cannot serve with: an empty API key, a limit of zero.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.api_key.as_deref() == Some("") {
            return Err(ConfigError::EmptyApiKey);
        }
        let zero = [
            ("--max-connections", self.max_connections == 0),
            (
                "--header-read-timeout-s",
                self.header_read_timeout.is_zero(),
            ),
            ("--body-read-timeout-s", self.body_read_timeout.is_zero()),
            ("--write-timeout-s", self.write_timeout.is_zero()),
        ];
        if let Some((name, _)) = zero.into_iter().find(|(_, z)| *z) {
            return Err(ConfigError::Zero(name));
        }
        let most = toolgram_runtime::votes::MAX_VOTES;
        if !(1..=most).contains(&self.max_votes) {
            return Err(ConfigError::MaxVotes(most));
        }
        if self.votes > self.max_votes {
            return Err(ConfigError::VotesOverMax {
                votes: self.votes,
                max: self.max_votes,
            });
        }
        Ok(())
    }

    /// Whether the server binds a loopback address only (`127.0.0.0/8`, `::1`, `localhost`):
    /// then only local clients reach it, and [`crate::guard`] checks that their `Host` and
    /// `Origin` name it as such.
    pub fn loopback_bind(&self) -> bool {
        crate::guard::is_loopback_name(&self.host)
    }
}

/// Tokens a reply gets when its request names no limit (BFCL's client sends none): a small
/// model's runaway string then ends here rather than at the context's end. A request that
/// names a limit gets it, up to the server's (`--max-tokens`, by default the context).
pub const DEFAULT_MAX_TOKENS: usize = 2048;

/// How long a request may take, from its arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    /// Sized to this machine: what a prompt filling the model's context and a
    /// [`DEFAULT_MAX_TOKENS`]-token reply take at the model's measured speed
    /// (`Runtime::speed`), [`MIN_SIZED_TIMEOUT`] at least — and that until the model is
    /// loaded and timed, or where it cannot be (a provider).
    Sized,
    /// This long, whatever the model (`--timeout-s`).
    Fixed(Duration),
}

/// The least a sized deadline gives a request (and what it gives before its model is timed).
pub const MIN_SIZED_TIMEOUT: Duration = Duration::from_secs(300);

impl Timeout {
    /// The time a request on `runtime` gets (`None`: its model is not loaded yet).
    pub fn on(self, runtime: Option<&Runtime>) -> Duration {
        match self {
            Self::Fixed(d) => d,
            Self::Sized => runtime
                .and_then(|r| Some((r.speed()?, r.context_size()?)))
                .map(|(speed, n_ctx)| {
                    let s = speed.seconds_for(n_ctx, DEFAULT_MAX_TOKENS);
                    Duration::from_secs_f64(s.ceil().min(1e7))
                })
                .map_or(MIN_SIZED_TIMEOUT, |d| d.max(MIN_SIZED_TIMEOUT)),
        }
    }
}

/// The model a request runs on: its id (replies name it), its runtime, the most tokens a
/// reply gets from it, and the request's deadline.
#[derive(Clone)]
pub struct Served {
    /// The id replies name.
    pub id: String,
    /// Its run stage.
    pub runtime: Runtime,
    /// `--max-tokens`, or its context (a provider's: [`DEFAULT_PROVIDER_MAX_TOKENS`]).
    pub max_tokens: usize,
    /// The time the request has ([`Timeout::on`] its model).
    pub timeout: Duration,
    /// When the request's time is up (`timeout` after it arrived).
    pub deadline: tokio::time::Instant,
}

/// The reply's `toolgram` object: what the run reports, and the notes of what the front end
/// did not do as asked.
pub fn toolgram_json(r: Option<&Response>, notes: &[String]) -> Value {
    let mut v = r.map_or_else(|| json!({}), Response::toolgram_json);
    v["notes"] = json!(notes);
    v
}

/// The `toolgram` object of a reply cut before any call was complete (`truncated`): the
/// notes, and the error that says why (its message, and what was repeated where a loop was
/// cut), on every API, streamed or not.
pub fn cut_toolgram_json(e: &RunError, notes: &[String]) -> Value {
    let mut v = toolgram_json(None, notes);
    v["error"] = e.to_json();
    v
}

/// A stored response: the conversation it ended, for `previous_response_id`.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The response id.
    pub id: String,
    /// Every message up to and including the reply.
    pub messages: Vec<ChatMessage>,
    /// The response object as it was returned, as JSON text (a parsed `Value` of a large
    /// array takes tens of times its text's bytes).
    pub body: String,
}

impl Stored {
    /// The bytes it holds, counted as JSON text: its body and its messages.
    pub fn bytes(&self) -> usize {
        let messages = serde_json::to_string(&self.messages).map_or(usize::MAX, |m| m.len());
        messages
            .saturating_add(self.body.len())
            .saturating_add(self.id.len())
    }
}

/// The Responses store: oldest first, with the bytes it holds.
#[derive(Debug, Default)]
pub struct Store {
    kept: VecDeque<(Stored, usize)>,
    bytes: usize,
}

/// The longest model name an error repeats (a client's can be megabytes).
pub const MAX_ECHOED_NAME: usize = 128;

/// The longest line [`App::log_once`] prints (a client's field name can be megabytes).
pub const MAX_LOG_LINE: usize = 300;

/// Everything the handlers share.
pub struct App {
    /// The models, each its own run stage; the first is the default.
    pub models: ModelSet,
    /// Settings.
    pub config: ServerConfig,
    /// Counters.
    pub metrics: Metrics,
    /// Responses kept for `previous_response_id`.
    pub stored: Mutex<Store>,
    /// Requests being read and checked at once (on the blocking pool): one per CPU, at least
    /// two, so heavy requests queue here rather than crowd the machine.
    pub checks: Arc<Semaphore>,
    /// Turns true when the drain's time is up: runs still in flight stop and answer with what
    /// they decoded.
    pub drain_over: watch::Sender<bool>,
    /// The MCP servers declared at start (`--mcp NAME=SERVER`), started; the only ones a
    /// request can reach.
    pub mcp: Option<ToolSources>,
    counter: AtomicU64,
    logged_notes: Mutex<HashSet<String>>,
}

impl App {
    /// The state for `models`.
    pub fn new(models: ModelSet, config: ServerConfig) -> Self {
        Self {
            models,
            config,
            metrics: Metrics::default(),
            stored: Mutex::new(Store::default()),
            checks: Arc::new(Semaphore::new(
                std::thread::available_parallelism().map_or(2, |n| n.get().max(2)),
            )),
            drain_over: watch::Sender::new(false),
            mcp: None,
            counter: AtomicU64::new(0),
            logged_notes: Mutex::new(HashSet::new()),
        }
    }

    /// The default model's id.
    pub fn model_id(&self) -> &str {
        self.models
            .models()
            .next()
            .map_or("toolgram", |m| m.id.as_str())
    }

    /// The model at `index` as a request that arrived at `arrival` runs on it.
    pub fn served(&self, index: usize, runtime: Runtime, arrival: tokio::time::Instant) -> Served {
        let timeout = self.config.timeout.on(Some(&runtime));
        let id = self
            .models
            .models()
            .nth(index)
            .map_or_else(|| self.model_id().to_owned(), |m| m.id.clone());
        let max_tokens = match self.config.max_tokens {
            0 => runtime
                .context_size()
                .unwrap_or(DEFAULT_PROVIDER_MAX_TOKENS),
            n => n,
        };
        Served {
            id,
            runtime,
            max_tokens,
            timeout,
            deadline: arrival + timeout,
        }
    }

    /// The model a request's `model` picks: a served id or alias; `toolgram`, `default` or
    /// none at all, the default model; the id with `.gguf`, that model; any other name the
    /// default model too, unless `strict_model_names` is set (a 404 listing the ids).
    pub fn choose(&self, model: Option<&str>) -> Result<usize, ApiError> {
        let Some(m) = model else { return Ok(0) };
        let found = self
            .models
            .find(m)
            .or_else(|| m.strip_suffix(".gguf").and_then(|id| self.models.find(id)));
        match found {
            Some(i) => Ok(i),
            None if m == "toolgram" || m == "default" || !self.config.strict_model_names => Ok(0),
            None => {
                let m = crate::clip::cut(m, MAX_ECHOED_NAME);
                let ids: Vec<String> = self
                    .models
                    .models()
                    .map(|m| format!("`{}`", m.id))
                    .collect();
                Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    "invalid_request_error",
                    "model_not_found",
                    format!(
                        "the model `{m}` does not exist here; this server serves {} (GET /v1/models)",
                        ids.join(", ")
                    ),
                )
                .param("model"))
            }
        }
    }

    /// Log each note on stderr the first time it is seen (the reply says it every time).
    pub fn log_notes(&self, route: &str, notes: &[String]) {
        self.log_once(route, "notes", notes);
    }

    /// Log each line once per route, saying which field of `toolgram` replies carry it in;
    /// a line is cut to [`MAX_LOG_LINE`] bytes, and at most 1,024 are remembered.
    pub fn log_once(&self, route: &str, field: &str, lines: &[String]) {
        let mut seen = self.logged_notes.lock().unwrap_or_else(|e| e.into_inner());
        for line in lines {
            let n = crate::clip::cut(line, MAX_LOG_LINE);
            if seen.len() < 1024 && seen.insert(format!("{route} {n}")) {
                eprintln!(
                    "toolgram serve: {route}: {n} (said once; replies carry it in toolgram.{field})"
                );
            }
        }
    }

    /// Seconds since the epoch.
    pub fn now(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// A new id with `prefix`.
    pub fn new_id(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        format!("{prefix}-{t:x}{n:04x}")
    }

    /// Keep a response for `previous_response_id`, dropping the oldest past either bound
    /// (count and bytes); one over a quarter of the byte bound is not kept (said once in the
    /// log).
    pub fn store(&self, s: Stored) {
        let bytes = s.bytes();
        let (max_bytes, max_count) = (
            self.config.max_stored_bytes,
            self.config.max_stored_responses,
        );
        if bytes > max_bytes / 4 || max_count == 0 {
            let note = format!(
                "a response over {} bytes (a quarter of --max-stored-bytes) is not stored for previous_response_id",
                max_bytes / 4
            );
            self.log_once("/v1/responses", "notes", &[note]);
            return;
        }
        let mut store = self.stored.lock().unwrap_or_else(|e| e.into_inner());
        store.kept.push_back((s, bytes));
        store.bytes += bytes;
        while store.kept.len() > max_count || store.bytes > max_bytes {
            match store.kept.pop_front() {
                Some((_, b)) => store.bytes -= b,
                None => break,
            }
        }
    }

    /// A stored response.
    pub fn stored(&self, id: &str) -> Option<Stored> {
        let store = self.stored.lock().unwrap_or_else(|e| e.into_inner());
        store
            .kept
            .iter()
            .find(|(s, _)| s.id == id)
            .map(|(s, _)| s.clone())
    }

    /// How many responses are stored, and the bytes they hold.
    pub fn stored_size(&self) -> (usize, usize) {
        let store = self.stored.lock().unwrap_or_else(|e| e.into_inner());
        (store.kept.len(), store.bytes)
    }
}
