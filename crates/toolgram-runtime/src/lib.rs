//! # toolgram-runtime — the run stage
//!
//! One library under every front end (`toolgram call`, `toolgram serve`, `toolgram eval`):
//! a [`Runtime`] built once — the embedded model, loaded and kept, or a provider — checks
//! [`Request`]s once ([`Runtime::ready`] → [`Ready`]) and runs what it checked: the pool
//! filtered for the request, the model or provider driven under the
//! validate-and-retry loop, repeats detected, and ONE [`Response`] built, with the same
//! fields on every path. Failures are [`RunError`]s with a stable kind and a status class.
//!
//! Contents:
//! - [`Request`], [`Sampling`], [`ResponseFormat`] — what a front end asks;
//! - [`Response`], [`Call`], [`CallKind`] — what it gets back, and its JSON form;
//! - [`RunError`], [`Status`] — how it fails;
//! - [`Runtime::stream`], [`Event`] — the reply as it is decoded;
//! - [`check_before_load`] — everything checkable before a model is loaded; [`Runtime::ready`] — a
//!   request's offered pool and grammar, computed once before it is queued, carried to its
//!   run as a [`Ready`];
//! - [`read_tools_file`], [`tools_from_json`] — tool pools from JSON (built-in grammar tools
//!   by name, manifests);
//! - [`ModelSet`] — several models by name, loaded on first use, least recently used
//!   unloaded past a bound; [`ModelDecl`], [`read_models_file`], [`embedded_entries`] — the
//!   models a front end serves, as declared (`--model`, `--models FILE`).
//!
//! The embedded model lives on one worker thread with a small LRU of sessions keyed by the
//! exact prompt prefix (system + tools), so a second request with the same tools evaluates
//! only its new turn (`usage.cached_prompt_tokens` says how much was reused); requests are
//! served in arrival order behind a bounded queue.
//!
//! ```no_run
//! use toolgram_core::{ChatMessage, ToolChoice};
//! use toolgram_runtime::{Backend, EmbeddedConfig, Request, Runtime, read_tools_file};
//!
//! let runtime = Runtime::new(Backend::Embedded(EmbeddedConfig::default()))?; // default model
//! let tools = read_tools_file("examples/weather.json".as_ref())?;
//! let mut req = Request::new(vec![ChatMessage::text("user", "Weather in Oslo?")], tools);
//! req.shape.choice = ToolChoice::Required;
//! let reply = runtime.run(&runtime.ready(req)?)?;
//! println!("{}", reply.to_json());
//! # Ok::<(), toolgram_runtime::RunError>(())
//! ```
//!
//! This crate must not compile grammars, decode, parse or render provider bodies itself: it
//! drives the stages that do.

#![deny(missing_docs)]

mod check;
mod embedded;
mod error;
mod format;
mod grammar_text;
pub mod model_set;
mod models_file;
mod pool;
mod post;
pub mod prefix_cache;
mod remote;
mod request;
mod response;
mod stream;
mod tool_loop;
mod tools;
mod user_files;
pub mod votes;

pub use check::{Checked, Ready, check_before_load, check_offer};
pub use embedded::CacheStats;
pub use error::{RunError, Status, engine_details, profile_error_kind, provider_error_kind};
pub use format::refuse_unknown;
pub use grammar_text::{GrammarFormat, check_grammar_text, pool_grammar, schema_grammar};
pub use model_set::{ModelEntry, ModelSet, ModelSetError, ModelState, Residency};
pub use models_file::{ModelDecl, add_aliases, embedded_entries, read_models_file};
pub use remote::RenderedRequest;
pub use request::{Cancel, Repeats, Request, ResponseFormat, RetryPolicy};
pub use response::{
    Branch, Call, CallKind, CutCall, FailedAttempt, FilteredTool, FinishReason, HiddenCallNote,
    PendingCall, RepeatedText, Response, RunTimings, Tally, ToolStep, TruncatedCall, Usage,
    failed_json, lenient_message,
};
pub use stream::{Event, EventStream, Sink};
pub use tool_loop::{Approval, DEFAULT_MAX_STEPS, Offered, ToolLoop, ToolRule};
pub use toolgram_engine::gpu::Offload;
pub use toolgram_engine::{GrammarStats, PLAN_CALL_BIAS, Sampling};
pub use toolgram_mcp::{McpError, SourceTool, ToolSources};
pub use tools::{read_tools_file, tools_from_json};
pub use user_files::{named_syntax, read_format_file, read_schema_file};

/// The stack of every thread that compiles a request's grammar (the lanes here, the server's
/// blocking pool): llguidance's compiler recurses once per rule reference, and a chain at the
/// Lark reader's limit (`toolgram_grammar::lark::MAX_REF_DEPTH`) needs three quarters of the
/// 2 MiB a spawned thread gets by default. Address space only: pages are touched as used.
pub const COMPILE_STACK_BYTES: usize = 8 << 20;

use embedded::{Embedded, Job, Reply, WorkerLimits};
use remote::Remote;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;
use toolgram_engine::{EngineOptions, models};
use toolgram_providers::Resolved;

/// The embedded model and how to keep it.
#[derive(Debug, Clone)]
pub struct EmbeddedConfig {
    /// A registry name or role, or a GGUF path (`None`: the default model, fetched on first
    /// use).
    pub model: Option<String>,
    /// How to load it.
    pub engine: EngineOptions,
    /// Sessions (lanes of one llama.cpp context, each with its own KV cache) kept for prefix
    /// reuse; at least `parallel`.
    pub max_sessions: usize,
    /// Requests decoding at once: their tokens go through llama.cpp in one batch
    /// (continuous batching); more wait in the queue.
    pub parallel: usize,
    /// Requests that may wait while one runs; more are [`RunError::Busy`].
    pub max_queue: usize,
    /// Keep evaluated prompt prefixes on disk, for later requests and later processes
    /// (`None`: only in memory, for this runtime's life).
    pub prefix_cache: Option<prefix_cache::PrefixCacheConfig>,
    /// Time a prompt and a few decode steps once the model is loaded
    /// ([`Runtime::speed`]; a few seconds on a CPU): a server sizes its deadline from it.
    pub measure_speed: bool,
}

impl Default for EmbeddedConfig {
    fn default() -> Self {
        Self {
            model: None,
            engine: EngineOptions::default(),
            max_sessions: 4,
            parallel: 1,
            max_queue: 64,
            prefix_cache: None,
            measure_speed: false,
        }
    }
}

/// A provider and how to talk to it.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The provider, its config entry and overrides merged.
    pub provider: Resolved,
    /// Ask it to stream (the reply is assembled before it is read).
    pub stream: bool,
}

/// What a [`Runtime`] runs on.
#[derive(Debug, Clone)]
pub enum Backend {
    /// The embedded llama.cpp engine.
    Embedded(EmbeddedConfig),
    /// A remote provider.
    Provider(ProviderConfig),
}

enum Inner {
    Embedded(Embedded),
    Remote(Remote),
}

/// The run stage, built once and shared (`Send + Sync`; clone it or put it in an `Arc`).
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl Runtime {
    /// Build a runtime: the embedded model is resolved (fetched on first use) and loaded
    /// now; a provider is only resolved.
    pub fn new(backend: Backend) -> Result<Self, RunError> {
        let inner = match backend {
            Backend::Embedded(cfg) => {
                let path = models::resolve(cfg.model.as_deref())?;
                let limits = WorkerLimits {
                    max_sessions: cfg.max_sessions,
                    parallel: cfg.parallel,
                    max_queue: cfg.max_queue,
                    measure_speed: cfg.measure_speed,
                };
                let store = match &cfg.prefix_cache {
                    Some(c) => {
                        let id = models::identity(&path)?;
                        let model = format!(
                            "{}-{}",
                            &id[..16.min(id.len())],
                            toolgram_engine::state_tag(limits.lanes())
                        );
                        let store: Arc<dyn toolgram_engine::PrefixStore> =
                            Arc::new(prefix_cache::DiskPrefixCache::new(c, &model));
                        Some(store)
                    }
                    None => None,
                };
                Inner::Embedded(Embedded::start(&path, cfg.engine, limits, store)?)
            }
            Backend::Provider(cfg) => Inner::Remote(Remote {
                provider: cfg.provider,
                stream: cfg.stream,
            }),
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// The model's name: the embedded file's, or the provider's model id.
    pub fn model_name(&self) -> String {
        match &*self.inner {
            Inner::Embedded(e) => e.model.clone(),
            Inner::Remote(r) => r.provider.model.clone().unwrap_or_default(),
        }
    }

    /// The embedded engine's call syntax (`None` for a provider).
    pub fn syntax(&self) -> Option<&'static toolgram_core::CallSyntax> {
        match &*self.inner {
            Inner::Embedded(e) => Some(e.syntax),
            Inner::Remote(_) => None,
        }
    }

    /// Whether the model reasons before it answers: its chat template writes a reasoning
    /// block (a provider: `false`, the provider decides).
    pub fn reasons(&self) -> bool {
        match &*self.inner {
            Inner::Embedded(e) => e.reasons,
            Inner::Remote(_) => false,
        }
    }

    /// How fast this machine runs the embedded model ([`EmbeddedConfig::measure_speed`]):
    /// `None` for a provider, before the measurement ends, or when it was not asked for.
    pub fn speed(&self) -> Option<toolgram_engine::speed::Speed> {
        match &*self.inner {
            Inner::Embedded(e) => e.speed.get().copied(),
            Inner::Remote(_) => None,
        }
    }

    /// Where the embedded model's layers are (`None` for a provider).
    pub fn offload(&self) -> Option<&Offload> {
        match &*self.inner {
            Inner::Embedded(e) => Some(&e.offload),
            Inner::Remote(_) => None,
        }
    }

    /// The embedded model's context window in tokens, prompt and reply together (`None` for
    /// a provider).
    pub fn context_size(&self) -> Option<usize> {
        match &*self.inner {
            Inner::Embedded(e) => Some(e.n_ctx),
            Inner::Remote(_) => None,
        }
    }

    /// The session cache's counters (`None` for a provider).
    pub fn cache_stats(&self) -> Option<&CacheStats> {
        match &*self.inner {
            Inner::Embedded(e) => Some(&e.stats),
            Inner::Remote(_) => None,
        }
    }

    /// Requests waiting for the embedded engine (0 for a provider).
    pub fn queue_depth(&self) -> usize {
        match &*self.inner {
            Inner::Embedded(e) => e.queued(),
            Inner::Remote(_) => 0,
        }
    }

    /// Lanes of the embedded engine that failed (panicked) while running a request since it
    /// started (0 for a provider): each released its slot and answered `lane_failed`.
    pub fn lanes_failed(&self) -> usize {
        match &*self.inner {
            Inner::Embedded(e) => e.lanes_failed.load(std::sync::atomic::Ordering::Relaxed),
            Inner::Remote(_) => 0,
        }
    }

    /// Make `req` ready to run, once, before it is queued: the pool offered for it and, for
    /// the embedded model, its call grammar compiled by the engine in the model's syntax (a
    /// schema it cannot take refused here, unknown keywords refused under `strict_schemas`,
    /// else listed); its run ([`Runtime::run`], [`Runtime::stream`]) reads them and compiles
    /// nothing again. A provider checks its own requests (nothing to say here).
    pub fn ready(&self, req: Request) -> Result<Ready, RunError> {
        check_votes(&req)?;
        match &*self.inner {
            Inner::Embedded(e) if req.votes > e.capacity() => {
                Err(RunError::InvalidRequest(format!(
                    "votes {}: this model admits {} requests at once (its lanes and queue: --parallel and --max-queue), and a request's ballots are admitted together",
                    req.votes,
                    e.capacity()
                )))
            }
            Inner::Embedded(e) => check::ready(&e.grammars, req),
            Inner::Remote(_) => Ready::remote(req),
        }
    }

    /// How much the embedded engine has compiled (`None` for a provider).
    pub fn grammar_stats(&self) -> Option<GrammarStats> {
        match &*self.inner {
            Inner::Embedded(e) => Some(e.grammars.stats()),
            Inner::Remote(_) => None,
        }
    }

    /// Run a checked request to its final reply (its ballots at once, under `votes`: admitted
    /// to the engine's queue together or not at all).
    pub fn run(&self, ready: &Ready) -> Result<Response, RunError> {
        if ready.req.votes > 1 {
            let seats = std::sync::Mutex::new(self.seats(ready.req.votes)?);
            return votes::run(
                |ballot| {
                    let seat = seats.lock().ok().and_then(|mut s| s.pop());
                    self.run_one(ballot, seat)
                },
                ready,
            );
        }
        self.run_one(ready, None)
    }

    /// Places in the embedded engine's queue for `n` ballots, taken together (none for a
    /// provider, whose ballots are its own requests).
    fn seats(&self, n: usize) -> Result<Vec<embedded::Admitted>, RunError> {
        match &*self.inner {
            Inner::Embedded(e) => e.reserve(n),
            Inner::Remote(_) => Ok(Vec::new()),
        }
    }

    fn run_one(
        &self,
        ready: &Ready,
        seat: Option<embedded::Admitted>,
    ) -> Result<Response, RunError> {
        let started = Instant::now();
        match &*self.inner {
            Inner::Embedded(e) => e.ask(ready.clone(), started, seat),
            Inner::Remote(r) => {
                let response = remote_reply(r, &ready.req, None)?;
                post::finish(&ready.req, &ready.filtered_out, started, response)
            }
        }
    }

    /// Run a checked request, yielding its [`Event`]s as the reply is decoded; the last is
    /// the final reply (the same as [`Runtime::run`] gives) or the error. Under `votes` the
    /// winning answer is sent once every ballot is in (the ballots admitted before this
    /// returns, together or not at all).
    pub fn stream(&self, ready: &Ready) -> Result<EventStream, RunError> {
        let (tx, rx) = mpsc::channel();
        self.stream_to(
            ready,
            Sink::new(move |e| {
                // A consumer that went away only stops listening; the run goes on.
                let _ = tx.send(e);
            }),
        )?;
        Ok(EventStream { rx })
    }

    /// [`Runtime::stream`] into `sink`, called with each event on the thread that runs the
    /// request: nothing between the run and its consumer but the sink.
    pub fn stream_to(&self, ready: &Ready, sink: Sink) -> Result<(), RunError> {
        if ready.req.votes > 1 {
            return self.stream_votes(ready, sink);
        }
        let started = Instant::now();
        match &*self.inner {
            Inner::Embedded(e) => e.submit(Job::new(ready.clone(), Reply::Stream(sink), started)),
            Inner::Remote(r) => {
                let r = r.clone();
                let Ready {
                    req, filtered_out, ..
                } = ready.clone();
                let custom = post::custom_names(&req.tools);
                let scan = r.live_scan(&req);
                std::thread::Builder::new()
                    .name("toolgram-provider".into())
                    .spawn(move || {
                        let live = scan.is_some();
                        let state =
                            RefCell::new(stream::StreamState::new(sink, scan, custom, false));
                        let result = remote_reply(&r, &req, live.then_some(&state))
                            .and_then(|resp| post::finish(&req, &filtered_out, started, resp));
                        state.into_inner().finish(result);
                    })
                    .map(|_| ())
                    .map_err(|e| RunError::Stopped(format!("cannot start a thread: {e}")))
            }
        }
    }

    fn stream_votes(&self, ready: &Ready, sink: Sink) -> Result<(), RunError> {
        let (runtime, ready) = (self.clone(), ready.clone());
        let custom = post::custom_names(&ready.req.tools);
        let seats = std::sync::Mutex::new(self.seats(ready.req.votes)?);
        std::thread::Builder::new()
            .name("toolgram-votes".into())
            .spawn(move || {
                let state = stream::StreamState::new(sink, None, custom, false);
                let cast = |ballot: &Ready| {
                    let seat = seats.lock().ok().and_then(|mut s| s.pop());
                    runtime.run_one(ballot, seat)
                };
                state.finish(votes::run(cast, &ready));
            })
            .map(|_| ())
            .map_err(|e| RunError::Stopped(format!("cannot start a thread: {e}")))
    }

    /// How many tokens `req`'s prompt has (its conversation and offered tools, rendered by the
    /// model's template), without decoding: Anthropic's `count_tokens`. Embedded model only.
    pub fn count_tokens(&self, req: &Request) -> Result<usize, RunError> {
        let (req, _) = pool::offer(req.clone())?;
        match &*self.inner {
            Inner::Embedded(e) => e.count(req),
            Inner::Remote(_) => Err(RunError::InvalidRequest(
                "counting tokens needs the embedded model's tokenizer; a provider counts its own"
                    .into(),
            )),
        }
    }

    /// The exact request a provider runtime would send first, with its path and reason.
    pub fn render(&self, req: &Request) -> Result<RenderedRequest, RunError> {
        match &*self.inner {
            Inner::Remote(r) => r.render(&pool::offer(req.clone())?.0),
            Inner::Embedded(_) => Err(RunError::InvalidRequest(
                "render shows a provider's request; give a provider".into(),
            )),
        }
    }
}

/// A provider's reply to `req`; one that hides a call in its text is asked again with a call
/// to that tool required (the tokens of both in its usage), unless the call it gets is one
/// already made and answered in the conversation (the text reported it).
/// With `live`, the first run's text is streamed as the provider sends it; a reply asked again
/// voids it (`Retry`) and is sent when the run ends.
fn remote_reply(
    r: &remote::Remote,
    req: &Request,
    live: Option<&RefCell<stream::StreamState>>,
) -> Result<Response, RunError> {
    let mut first = r.run(req, live.map(stream::LiveState::boxed))?;
    let Some(hidden) =
        post::hidden_call(req, first.content.as_deref(), !first.tool_calls.is_empty())
    else {
        return Ok(first);
    };
    if let Some(state) = live {
        state.borrow_mut().started();
    }
    let mut again = r.run(&post::forced(req, &hidden.tool), None)?;
    let usage = match (first.usage, again.usage) {
        (Some(mut a), Some(b)) => {
            a += b;
            Some(a)
        }
        (a, b) => a.or(b),
    };
    let attempts = first.attempts + again.attempts;
    let calls = post::core_calls(&again.tool_calls);
    if !calls.is_empty() && post::excluded_repeats(req, &calls).len() == calls.len() {
        // The text reported a call already made and answered: it stands.
        first.usage = usage;
        first.attempts = attempts;
        return Ok(first);
    }
    again.usage = usage;
    again.attempts = attempts;
    again.failed_attempts.splice(0..0, first.failed_attempts);
    again.hidden_call = Some(post::hidden_note(&hidden));
    Ok(again)
}

/// Refuse a number of ballots outside 1..=[`votes::MAX_VOTES`].
fn check_votes(req: &Request) -> Result<(), RunError> {
    match req.votes {
        1..=votes::MAX_VOTES => Ok(()),
        n => Err(RunError::InvalidRequest(format!(
            "votes {n}: give 1 to {}",
            votes::MAX_VOTES
        ))),
    }
}
