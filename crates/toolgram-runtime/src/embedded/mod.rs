//! The embedded model behind a queue: one engine thread loads the [`Engine`] and one batched
//! context ([`toolgram_engine::Batch`]) with a lane per kept session, and hands requests in
//! arrival order (fair, bounded: a full queue is [`RunError::Busy`]) to lane threads, at most
//! `parallel` at once — their tokens decode together in one llama.cpp batch. A
//! [`crate::Runtime`] is `Send + Sync` and a server can share it. Streamed requests get the
//! engine's bytes as they are decoded. A lane that panics answers its request with
//! [`RunError::LaneFailed`], releases its slot and opens a fresh session (counted for
//! `/health`). Dropping the handle closes the queue and joins the engine thread, which frees
//! the context, the model and the backend in that order. This module must not parse or
//! validate: the attempt runner and the stages below do.

mod attempt;
mod cache;
#[cfg(test)]
mod tests;

pub use cache::CacheStats;

use crate::check::{Ready, ReadyFormat};
use crate::error::RunError;
use crate::post;
use crate::request::{Cancel, Repeats, Request};
use crate::response::Response;
use crate::stream::{Event, ScanOptions, Sink, StreamState};
use cache::{Slots, prefix_key};
use std::cell::RefCell;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;
use toolgram_core::ToolChoice;
use toolgram_core::define::request::Think;
use toolgram_core::syntax::{CallBody, CallSyntax};
use toolgram_engine::Session;
use toolgram_engine::gpu::Offload;
use toolgram_engine::speed::Speed;
use toolgram_engine::{
    Batch, CompiledCall, CompiledGeneration, DecodeObserver, Engine, EngineOptions, Grammars,
    PrefixStore,
};

/// Where a job's result goes.
#[derive(Clone)]
pub(crate) enum Reply {
    /// The whole result, once.
    Once(Sender<Result<Response, RunError>>),
    /// Events as they are decoded, then the result.
    Stream(Sink),
    /// Only the prompt's length in tokens (nothing is decoded).
    Count(Sender<Result<usize, RunError>>),
}

/// One request in the queue: what its check made ([`Ready`]), or for counting its prompt
/// only the request.
pub(crate) struct Job {
    pub req: Request,
    pub filtered_out: Vec<crate::response::FilteredTool>,
    /// The call grammar its check compiled; `None` only for a response format alone or a
    /// count.
    pub call: Option<Arc<CompiledCall>>,
    /// The response format its check prepared (and compiled, alone); `None` without one.
    pub format: Option<Arc<ReadyFormat>>,
    pub reply: Reply,
    pub queued_at: Instant,
    /// Its place among the admitted jobs, given back when the job is dropped (answered,
    /// failed or cancelled); set by [`Embedded::submit`].
    pub admitted: Option<Admitted>,
}

impl Job {
    /// The job of a checked request.
    pub(crate) fn new(ready: Ready, reply: Reply, queued_at: Instant) -> Self {
        Self {
            req: ready.req,
            filtered_out: ready.filtered_out,
            call: ready.call,
            format: ready.format,
            reply,
            queued_at,
            admitted: None,
        }
    }
}

/// A job's place in the bound `parallel` running + `max_queue` waiting.
pub(crate) struct Admitted(Arc<AtomicUsize>);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The handle to the worker. Dropped, it ends the worker and waits for it: every llama.cpp
/// context, the model and the backend are freed before the drop returns.
pub(crate) struct Embedded {
    jobs: SyncSender<Job>,
    worker: Option<JoinHandle<()>>,
    /// Lanes that failed (panicked) while running a request, for `/health`.
    pub lanes_failed: Arc<AtomicUsize>,
    max_queue: usize,
    /// Jobs admitted and not yet answered: at most `parallel + max_queue`.
    admitted: Arc<AtomicUsize>,
    parallel: usize,
    capacity: usize,
    waiting: Arc<AtomicUsize>,
    pub model: String,
    pub syntax: &'static CallSyntax,
    /// The chat template writes a reasoning block.
    pub reasons: bool,
    /// Where the model's layers are.
    pub offload: Arc<Offload>,
    pub stats: Arc<CacheStats>,
    /// The engine's grammar compiler, for checking requests before they are queued.
    pub grammars: Arc<Grammars>,
    /// The context window in tokens (prompt and reply together).
    pub n_ctx: usize,
    /// How fast this machine runs the model, once measured ([`WorkerLimits::measure_speed`]).
    pub speed: Arc<OnceLock<Speed>>,
}

/// How the worker keeps its state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WorkerLimits {
    /// Lanes whose KV cache outlives a request (at least `parallel`).
    pub max_sessions: usize,
    /// Requests decoding at once, in one batch.
    pub parallel: usize,
    pub max_queue: usize,
    /// Time a prompt and a few decode steps on a lane before the first job is served.
    pub measure_speed: bool,
}

impl WorkerLimits {
    /// The lanes of the engine's context: one KV stream each.
    pub(crate) fn lanes(&self) -> usize {
        self.max_sessions.max(self.parallel.max(1))
    }
}

impl Embedded {
    /// Load the model on a new worker thread; its load error comes back here.
    pub(crate) fn start(
        path: &Path,
        opts: EngineOptions,
        limits: WorkerLimits,
        store: Option<Arc<dyn PrefixStore>>,
    ) -> Result<Self, RunError> {
        // Room for every job admission lets in (admission, not the channel, bounds the queue).
        let (jobs, queue) =
            mpsc::sync_channel::<Job>(limits.parallel.max(1) + limits.max_queue.max(1));
        let (ready_tx, ready) = mpsc::channel();
        let stats = Arc::new(CacheStats::default());
        let worker_stats = Arc::clone(&stats);
        let waiting = Arc::new(AtomicUsize::new(0));
        let worker_waiting = Arc::clone(&waiting);
        let lanes_failed = Arc::new(AtomicUsize::new(0));
        let worker_failed = Arc::clone(&lanes_failed);
        let speed = Arc::new(OnceLock::new());
        let worker_speed = Arc::clone(&speed);
        let path = path.to_owned();
        let worker = std::thread::Builder::new()
            .name("toolgram-engine".into())
            .spawn(move || {
                // Declared first, dropped last: gone only once the engine is.
                let failed = worker_failed;
                let engine = match Engine::load(&path, &opts) {
                    Ok(e) => e,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok((
                    engine.model_name().to_owned(),
                    engine.syntax(),
                    engine.template_reasons(),
                    Arc::clone(engine.offload()),
                    Arc::clone(engine.grammars()),
                    engine.n_ctx() as usize,
                )));
                let worker = Worker {
                    engine: &engine,
                    waiting: worker_waiting,
                    failed: &failed,
                    speed: worker_speed,
                };
                worker.work(&queue, limits, worker_stats, store);
            })
            .map_err(|e| RunError::Stopped(format!("cannot start the engine thread: {e}")))?;
        let (model, syntax, reasons, offload, grammars, n_ctx) = ready
            .recv()
            .map_err(|_| RunError::Stopped("the engine thread ended while loading".into()))??;
        Ok(Self {
            jobs,
            worker: Some(worker),
            lanes_failed,
            max_queue: limits.max_queue.max(1),
            admitted: Arc::new(AtomicUsize::new(0)),
            parallel: limits.parallel.max(1),
            capacity: limits.parallel.max(1) + limits.max_queue.max(1),
            waiting,
            model,
            syntax,
            reasons,
            offload,
            stats,
            grammars,
            n_ctx,
            speed,
        })
    }

    /// Queue a checked request (in its `seat` when one was reserved for it) and wait for its
    /// reply.
    pub(crate) fn ask(
        &self,
        ready: Ready,
        queued_at: Instant,
        seat: Option<Admitted>,
    ) -> Result<Response, RunError> {
        let (tx, rx) = mpsc::channel();
        let mut job = Job::new(ready, Reply::Once(tx), queued_at);
        job.admitted = seat;
        self.submit(job)?;
        Self::answer(&rx)
    }

    /// Places for `n` jobs taken together (a request's ballots), or [`RunError::Busy`] when
    /// fewer are free: admitted whole or not at all.
    pub(crate) fn reserve(&self, n: usize) -> Result<Vec<Admitted>, RunError> {
        let busy = || RunError::Busy {
            queued: self.max_queue,
        };
        let mut now = self.admitted.load(Ordering::Acquire);
        loop {
            if now.checked_add(n).is_none_or(|after| after > self.capacity) {
                return Err(busy());
            }
            match self
                .admitted
                .compare_exchange(now, now + n, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(seen) => now = seen,
            }
        }
        Ok((0..n)
            .map(|_| Admitted(Arc::clone(&self.admitted)))
            .collect())
    }

    /// Jobs this engine admits at once: `parallel` running and `max_queue` waiting.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many tokens `req`'s prompt has (its pool already offered): rendered and tokenized
    /// in turn with the queue, nothing decoded.
    pub(crate) fn count(&self, req: Request) -> Result<usize, RunError> {
        let (tx, rx) = mpsc::channel();
        self.submit(Job {
            req,
            filtered_out: Vec::new(),
            call: None,
            format: None,
            reply: Reply::Count(tx),
            queued_at: Instant::now(),
            admitted: None,
        })?;
        Self::answer(&rx)
    }

    fn answer<T>(rx: &Receiver<Result<T, RunError>>) -> Result<T, RunError> {
        rx.recv()
            .map_err(|_| RunError::Stopped("the engine thread ended during the run".into()))?
    }

    /// Queue a job, admitted now unless it holds a reserved place; a full queue is
    /// [`RunError::Busy`].
    pub(crate) fn submit(&self, mut job: Job) -> Result<(), RunError> {
        // Admission by count of the jobs not yet answered, running or waiting: the channel's
        // own bound does not see the job the dispatcher holds while it waits for a lane.
        if job.admitted.is_none() {
            if self.admitted.fetch_add(1, Ordering::AcqRel) >= self.capacity {
                self.admitted.fetch_sub(1, Ordering::AcqRel);
                return Err(RunError::Busy {
                    queued: self.max_queue,
                });
            }
            job.admitted = Some(Admitted(Arc::clone(&self.admitted)));
        }
        self.waiting.fetch_add(1, Ordering::AcqRel);
        self.jobs.try_send(job).map_err(|e| {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            match e {
                TrySendError::Full(_) => RunError::Busy {
                    queued: self.max_queue,
                },
                TrySendError::Disconnected(_) => {
                    RunError::Stopped("the engine thread has ended".into())
                }
            }
        })
    }

    /// Jobs waiting for a lane: not yet started, beyond the `parallel` that may run (a job
    /// on its way to a free lane is not waiting), so never more than `max_queue`.
    pub(crate) fn queued(&self) -> usize {
        let admitted = self.admitted.load(Ordering::Acquire);
        self.waiting
            .load(Ordering::Acquire)
            .min(admitted.saturating_sub(self.parallel))
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        // With its queue closed the worker ends: its lanes finish what they run, its batch
        // (the context) and then its engine (model, backend) are freed on its thread.
        let (closed, _) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.jobs, closed));
        if let Some(worker) = self.worker.take()
            && worker.join().is_err()
        {
            tracing::error!("the engine thread panicked");
        }
    }
}

/// The worker thread's state.
struct Worker<'e> {
    engine: &'e Engine,
    waiting: Arc<AtomicUsize>,
    failed: &'e AtomicUsize,
    speed: Arc<OnceLock<Speed>>,
}

impl<'e> Worker<'e> {
    /// Open the batch, start one thread per lane, and hand each queued job to a free lane
    /// (the one holding its prefix if free) while fewer than `parallel` run.
    fn work(
        &self,
        queue: &Receiver<Job>,
        limits: WorkerLimits,
        stats: Arc<CacheStats>,
        store: Option<Arc<dyn PrefixStore>>,
    ) {
        let parallel = limits.parallel.max(1);
        let lanes = limits.lanes();
        let batch = match self.engine.batch(lanes) {
            Ok(b) => b,
            Err(e) => {
                tracing::error!(error = %e, "cannot open the engine's context");
                for job in queue.iter() {
                    self.waiting.fetch_sub(1, Ordering::Relaxed);
                    // A lost worker keeps its own name (a 503 that says which).
                    let failure = match &e {
                        toolgram_engine::EngineError::Worker { worker, reason } => {
                            toolgram_engine::EngineError::Worker {
                                worker: worker.clone(),
                                reason: reason.clone(),
                            }
                        }
                        _ => toolgram_engine::EngineError::ModelLoad {
                            path: self.engine.model_name().to_owned(),
                            reason: e.to_string(),
                        },
                    };
                    job.reply.fail(RunError::Engine(failure));
                }
                return;
            }
        };
        if limits.measure_speed {
            self.measure_speed(&batch);
        }
        let mut slots = Slots::new(lanes, stats);
        let (done_tx, done) = mpsc::channel::<usize>();
        std::thread::scope(|scope| {
            let mut lane_jobs = Vec::with_capacity(lanes);
            for i in 0..lanes {
                let (tx, rx) = mpsc::channel::<Job>();
                lane_jobs.push(tx);
                let (batch, store, done_tx) = (&batch, store.clone(), done_tx.clone());
                let spawned = std::thread::Builder::new()
                    .name(format!("toolgram-lane-{i}"))
                    .stack_size(crate::COMPILE_STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        let mut session = None;
                        for job in rx {
                            self.run_on_lane(i, batch, &store, &mut session, job);
                            let _ = done_tx.send(i);
                        }
                    });
                if let Err(e) = spawned {
                    tracing::error!(error = %e, "cannot start a lane thread");
                }
            }
            while let Ok(job) = queue.recv() {
                if let Reply::Count(tx) = &job.reply {
                    // Counting renders and tokenizes; it waits for no lane.
                    self.waiting.fetch_sub(1, Ordering::Relaxed);
                    let n = self
                        .engine
                        .prompt_tokens(&job.req.messages, &job.req.tools)
                        .map_err(RunError::from);
                    let _ = tx.send(n);
                    continue;
                }
                if job.req.cancel.is_cancelled() {
                    self.waiting.fetch_sub(1, Ordering::Relaxed);
                    job.reply
                        .fail(RunError::Engine(toolgram_engine::EngineError::Cancelled {
                            usage: None,
                            partial: String::new(),
                        }));
                    continue;
                }
                let key = prefix_key(&job.req);
                let lane = loop {
                    while let Ok(i) = done.try_recv() {
                        slots.release(i);
                    }
                    if slots.running() < parallel
                        && let Some(i) = slots.take(key)
                    {
                        break Some(i);
                    }
                    match done.recv() {
                        Ok(i) => slots.release(i),
                        Err(_) => break None,
                    }
                };
                self.waiting.fetch_sub(1, Ordering::Relaxed);
                tracing::debug!(
                    waited_ms = job.queued_at.elapsed().as_millis() as u64,
                    lane,
                    "request started"
                );
                match lane.and_then(|i| lane_jobs.get(i)) {
                    Some(tx) => {
                        if let Err(mpsc::SendError(job)) = tx.send(job) {
                            job.reply
                                .fail(RunError::Stopped("a lane thread has ended".into()));
                        }
                    }
                    None => job
                        .reply
                        .fail(RunError::Stopped("no lane thread is running".into())),
                }
            }
            drop(lane_jobs);
        });
    }

    /// Time this model on a lane of `batch` (freed after), said on stderr and kept for
    /// [`crate::Runtime::speed`]; a failure is logged and leaves the speed unknown.
    fn measure_speed(&self, batch: &Arc<Batch<'e>>) {
        match batch.session().and_then(|mut s| s.measure_speed()) {
            Ok(speed) => {
                tracing::info!(
                    model = self.engine.model_name(),
                    prefill_tokens_per_s = speed.prefill_per_s.round(),
                    decode_tokens_per_s = (speed.decode_per_s * 10.0).round() / 10.0,
                    "measured this machine's speed on the model"
                );
                let _ = self.speed.set(speed);
            }
            Err(e) => tracing::warn!(error = %e, "could not time the model"),
        }
    }

    /// Run `job` on lane `i`'s `session` (opened first if the lane has none). A panic while
    /// it runs is caught: the client gets [`RunError::LaneFailed`], and the session (whose
    /// state is then unknown) is dropped, freeing its KV cells; the next job opens a fresh one.
    fn run_on_lane(
        &self,
        i: usize,
        batch: &Arc<Batch<'e>>,
        store: &Option<Arc<dyn PrefixStore>>,
        session: &mut Option<Session<'e>>,
        job: Job,
    ) {
        if session.is_none() {
            match batch.session() {
                Ok(mut s) => {
                    s.set_prefix_store(store.clone());
                    *session = Some(s);
                }
                Err(e) => {
                    let why = format!("cannot open lane {i}: {e}");
                    return job.reply.fail(RunError::Stopped(why));
                }
            }
        }
        let Some(open) = session.as_mut() else {
            return;
        };
        let reply = job.reply.clone();
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| self.handle(open, job)));
        if let Err(panic) = ran {
            let message = panic_text(panic.as_ref());
            tracing::error!(lane = i, %message, "a lane failed; its next request opens a fresh session");
            self.failed.fetch_add(1, Ordering::Relaxed);
            *session = None;
            reply.fail(RunError::LaneFailed { lane: i, message });
        }
    }

    fn handle(&self, session: &mut Session<'e>, job: Job) {
        #[cfg(test)]
        tests::panic_if_asked();
        let engine = self.engine;
        let started = Instant::now();
        let Job {
            req,
            filtered_out,
            call: compiled,
            format,
            reply,
            queued_at,
            admitted: _admitted,
        } = job;
        let queue_ms = started.duration_since(queued_at).as_secs_f64() * 1e3;
        let state = match &reply {
            Reply::Stream(tx) => {
                // Read live where the grammar makes the reply final; otherwise the reply is
                // sent once it passed validation, so no consumer sees a call taken back.
                // The live scanner reads JSON call bodies; other bodies are sent whole.
                let json_body = engine.syntax().body == CallBody::Json;
                let live = req.format_only()
                    || (json_body && !validation_can_fail(&req, compiled.as_deref()));
                let scan = live.then(|| ScanOptions {
                    syntax: engine.syntax(),
                    think: req.shape.think != Think::Off,
                    calls: req.shape.choice != ToolChoice::None,
                    plain: req.format_only(),
                });
                let custom = post::custom_names(&req.tools);
                let hold = req.shape.parallel && req.repeats == Repeats::Forbid;
                Some(Rc::new(RefCell::new(StreamState::new(
                    tx.clone(),
                    scan,
                    custom,
                    hold,
                ))))
            }
            Reply::Once(_) | Reply::Count(_) => None,
        };
        session.set_observer(Some(Box::new(Observer {
            stream: state.clone(),
            cancel: req.cancel.clone(),
        })));
        let result = attempt::run(session, &req, compiled.as_deref(), format.as_deref());
        session.set_observer(None);
        let result = result
            .and_then(|r| post::finish(&req, &filtered_out, started, r))
            .map(|mut r| {
                r.timings.queue_ms = queue_ms;
                r.timings.grammar_ms += compiled.as_ref().map_or(0.0, |c| c.compile_ms())
                    + format
                        .as_ref()
                        .and_then(|f| f.alone.as_ref())
                        .map_or(0.0, CompiledGeneration::compile_ms);
                r.offload = Some(Arc::clone(engine.offload()));
                r
            });
        match (reply, state) {
            (Reply::Once(tx), _) => {
                let _ = tx.send(result);
            }
            (Reply::Stream(_), Some(state)) => match Rc::try_unwrap(state) {
                Ok(s) => s.into_inner().finish(result),
                Err(_) => tracing::error!("the stream state is still shared after the run"),
            },
            (Reply::Stream(sink), None) => {
                sink.send(Event::Failed(RunError::Stopped("no stream state".into())));
            }
            (Reply::Count(tx), _) => {
                let _ = tx.send(result.map(|r| r.usage.map_or(0, |u| u.prompt_tokens)));
            }
        }
    }
}

/// What a panic said.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Feeds the engine's bytes to a stream, and tells it when the request was cancelled.
struct Observer {
    stream: Option<Rc<RefCell<StreamState>>>,
    cancel: Cancel,
}

impl DecodeObserver for Observer {
    fn started(&mut self) {
        if let Some(s) = &self.stream {
            s.borrow_mut().started();
        }
    }

    fn piece(&mut self, bytes: &[u8]) {
        if let Some(s) = &self.stream {
            s.borrow_mut().piece(bytes);
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

impl Reply {
    fn fail(self, e: RunError) {
        match self {
            Self::Once(tx) => {
                let _ = tx.send(Err(e));
            }
            Self::Stream(sink) => sink.send(Event::Failed(e)),
            Self::Count(tx) => {
                let _ = tx.send(Err(e));
            }
        }
    }
}

/// Whether a reply decoded under `req`'s grammar (`compiled`) can still fail validation or
/// change: an answer beside the tools, a plan, what the run stage may still change
/// ([`post::run_may_change`]), keywords the grammar left to the validator.
fn validation_can_fail(req: &Request, compiled: Option<&CompiledCall>) -> bool {
    // An answer in a response format beside the tools is known once the reply is; so is a
    // reply the plan may count (it may be decoded again, or open with its plan line).
    let planned = req.shape.plan.is_on()
        && req.shape.parallel
        && !req.tools.is_empty()
        && req.shape.choice != ToolChoice::None;
    let answer = req.response_format.is_some() || planned;
    answer || post::run_may_change(req) || compiled.is_none_or(CompiledCall::defers_keywords)
}
