//! The embedded model behind a queue: one worker thread owns the loaded [`Engine`] and its
//! session cache, and runs requests one at a time in arrival order (fair, bounded: a full
//! queue is [`RunError::Busy`]), so a [`crate::Runtime`] is `Send + Sync` and a server can
//! share it. Streamed requests get the engine's bytes as they are decoded. This module must
//! not parse or validate: the attempt runner and the stages below do.

mod attempt;
mod cache;

pub use cache::CacheStats;

use crate::error::RunError;
use crate::post;
use crate::request::Request;
use crate::response::Response;
use crate::stream::{Event, ScanOptions, StreamState};
use cache::{SessionCache, prefix_key};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};
use std::time::Instant;
use toolgram_core::ToolChoice;
use toolgram_core::compile::{Mode, Think};
use toolgram_core::syntax::CallSyntax;
use toolgram_engine::{DecodeObserver, Engine, EngineOptions};

/// Where a job's result goes.
pub(crate) enum Reply {
    /// The whole result, once.
    Once(Sender<Result<Response, RunError>>),
    /// Events as they are decoded, then the result.
    Stream(Sender<Event>),
}

/// One request in the queue.
pub(crate) struct Job {
    pub req: Request,
    pub filtered_out: Vec<String>,
    pub reply: Reply,
    pub queued_at: Instant,
}

/// The handle to the worker.
pub(crate) struct Embedded {
    jobs: SyncSender<Job>,
    max_queue: usize,
    pub model: String,
    pub syntax: &'static CallSyntax,
    pub stats: Arc<CacheStats>,
}

/// How the worker keeps its state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WorkerLimits {
    pub max_sessions: usize,
    pub max_queue: usize,
}

impl Embedded {
    /// Load the model on a new worker thread; its load error comes back here.
    pub(crate) fn start(
        path: &Path,
        opts: EngineOptions,
        limits: WorkerLimits,
    ) -> Result<Self, RunError> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(limits.max_queue);
        let (ready_tx, ready) = mpsc::channel();
        let stats = Arc::new(CacheStats::default());
        let worker_stats = Arc::clone(&stats);
        let path = path.to_owned();
        std::thread::Builder::new()
            .name("toolgram-engine".into())
            .spawn(move || {
                let engine = match Engine::load(&path, &opts) {
                    Ok(e) => e,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok((engine.model_name().to_owned(), engine.syntax())));
                work(
                    &engine,
                    &queue,
                    limits.max_sessions,
                    worker_stats,
                    opts.lenient,
                );
            })
            .map_err(|e| RunError::Stopped(format!("cannot start the engine thread: {e}")))?;
        let (model, syntax) = ready
            .recv()
            .map_err(|_| RunError::Stopped("the engine thread ended while loading".into()))??;
        Ok(Self {
            jobs,
            max_queue: limits.max_queue,
            model,
            syntax,
            stats,
        })
    }

    /// Queue a job; a full queue is [`RunError::Busy`].
    pub(crate) fn submit(&self, job: Job) -> Result<(), RunError> {
        self.jobs.try_send(job).map_err(|e| match e {
            TrySendError::Full(_) => RunError::Busy {
                queued: self.max_queue,
            },
            TrySendError::Disconnected(_) => {
                RunError::Stopped("the engine thread has ended".into())
            }
        })
    }
}

fn work(
    engine: &Engine,
    queue: &Receiver<Job>,
    max_sessions: usize,
    stats: Arc<CacheStats>,
    lenient: bool,
) {
    let mut cache = SessionCache::new(engine, max_sessions, stats);
    while let Ok(job) = queue.recv() {
        tracing::debug!(
            waited_ms = job.queued_at.elapsed().as_millis() as u64,
            "request dequeued"
        );
        handle(engine, &mut cache, job, lenient);
    }
}

/// Feeds the engine's bytes to a stream.
struct Observer(Rc<RefCell<StreamState>>);

impl DecodeObserver for Observer {
    fn started(&mut self) {
        self.0.borrow_mut().started();
    }

    fn piece(&mut self, bytes: &[u8]) {
        self.0.borrow_mut().piece(bytes);
    }
}

fn handle(engine: &Engine, cache: &mut SessionCache<'_>, job: Job, lenient: bool) {
    let started = Instant::now();
    let Job {
        req,
        filtered_out,
        reply,
        ..
    } = job;
    let state = match &reply {
        Reply::Stream(tx) => {
            // Constrained output is read live; prompt mode's free text only when it ends.
            let live = req.mode != Mode::Prompt || req.response_format.is_some();
            let scan = live.then(|| ScanOptions {
                syntax: engine.syntax(),
                think: req.think != Think::Off,
                calls: req.tool_choice != ToolChoice::None,
                plain: req.response_format.is_some(),
            });
            let custom = post::custom_names(&req.tools);
            Some(Rc::new(RefCell::new(StreamState::new(
                tx.clone(),
                scan,
                custom,
            ))))
        }
        Reply::Once(_) => None,
    };
    let result = cache
        .session(prefix_key(&req))
        .map_err(RunError::from)
        .and_then(|session| {
            if let Some(s) = &state {
                session.set_observer(Some(Box::new(Observer(Rc::clone(s)))));
            }
            let r = attempt::run(session, &req, lenient);
            session.set_observer(None);
            r
        })
        .and_then(|r| post::finish(&req, &filtered_out, started, r));
    match (reply, state) {
        (Reply::Once(tx), _) => {
            let _ = tx.send(result);
        }
        (Reply::Stream(_), Some(state)) => match Rc::try_unwrap(state) {
            Ok(s) => s.into_inner().finish(result),
            Err(_) => tracing::error!("the stream state is still shared after the run"),
        },
        (Reply::Stream(tx), None) => {
            let _ = tx.send(Event::Failed(RunError::Stopped("no stream state".into())));
        }
    }
}
