//! Running a request from async handlers: the runtime's blocking calls on tokio's blocking
//! pool, the request cancelled at once when its handler, its stream's events or its SSE body
//! is dropped (the client went away, before or after the first event) or its time runs out
//! (a 504 carrying what it decoded and its usage) or the server's drain ends (a 503 carrying
//! the same), and a stream's events forwarded to an async channel. A cancelled run's tokens
//! are counted here, where its result ends (nobody reads it); a stream's frames forwarded to
//! its client ([`forward`]). This module must not build replies.

use crate::app::{App, Served};
use crate::error::ApiError;
use crate::metrics::StreamClock;
use axum::http::StatusCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;
use toolgram_runtime::{Cancel, Event, Ready, Response, RunError, Sink};

/// Cancels the request when dropped: a handler dropped mid-run means its client is gone.
pub struct CancelOnDrop(pub Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// How long a run past its time is given to stop (it stops at its next decode step or prompt
/// chunk) before its 504 goes out; one that stopped by then puts its partial text and usage
/// in the 504.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

fn timed_out(timeout: Duration) -> ApiError {
    ApiError::new(
        StatusCode::GATEWAY_TIMEOUT,
        "timeout_error",
        "timeout",
        format!(
            "the request took longer than {} s (--timeout-s, for the whole request)",
            timeout.as_secs()
        ),
    )
}

fn shut_down(app: &App) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "server_error",
        "shutting_down",
        format!(
            "the server is shutting down and its {} s drain (--drain-timeout-s) ended before this request",
            app.config.drain_timeout.as_secs_f64()
        ),
    )
}

/// Resolves when the drain's time is up (never while the server is serving).
async fn drain_over(app: &App) {
    let mut over = app.drain_over.subscribe();
    if over.wait_for(|over| *over).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Run the checked `req` to its reply within its deadline (the request's, set when it
/// arrived); past it, or past the drain's end, the run is stopped and its error carries what
/// it decoded (504, or 503 at shutdown).
pub async fn run(
    app: &Arc<App>,
    served: &Served,
    req: Ready,
) -> Result<Result<Response, RunError>, ApiError> {
    let cancel = req.request().cancel.clone();
    let runtime = served.runtime.clone();
    run_work(app, served, cancel, move || runtime.run(&req)).await
}

/// [`run`] for any blocking `work` that `cancel` stops (a tool loop): on the blocking pool,
/// within the request's deadline and the drain.
pub async fn run_work(
    app: &Arc<App>,
    served: &Served,
    cancel: Cancel,
    work: impl FnOnce() -> Result<Response, RunError> + Send + 'static,
) -> Result<Result<Response, RunError>, ApiError> {
    let guard = CancelOnDrop(cancel);
    let ran = Arc::clone(app);
    let mut task = tokio::task::spawn_blocking(move || {
        let result = work();
        if let Err(e) = &result {
            ran.metrics.cancelled(e);
        }
        result
    });
    let stopped = tokio::select! {
        done = tokio::time::timeout_at(served.deadline, &mut task) => match done {
            Ok(Ok(result)) => return Ok(result),
            Ok(Err(join)) => return Err(ApiError::internal("the run", join)),
            Err(_) => timed_out(served.timeout),
        },
        () = drain_over(app) => shut_down(app),
    };
    // Stopped now, the run frees its lane at its next step; what it decoded so far goes in
    // the error.
    guard.0.cancel();
    let out = match tokio::time::timeout(STOP_GRACE, task).await {
        Ok(Ok(Ok(done))) => Ok(Ok(done)),
        Ok(Ok(Err(e))) => Err(stopped.with_details(e.details())),
        _ => Err(stopped),
    };
    drop(guard);
    out
}

/// A run's events as they come, straight from the run's sink; dropped (its client went away,
/// before or after the first event), it cancels the run at once.
pub struct Events {
    rx: mpsc::UnboundedReceiver<Event>,
    /// Set when the run was stopped by its deadline or the drain's end: why.
    stopped: Arc<OnceLock<Stop>>,
    _cancel: CancelOnDrop,
}

/// Why a run was stopped from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The request's deadline passed (the time it had).
    Deadline(Duration),
    /// The server's drain ended.
    Drain,
}

impl Events {
    /// The next event; `None` once the run ended.
    pub async fn recv(&mut self) -> Option<Event> {
        self.rx.recv().await
    }

    /// The error for a run that ended cancelled before anything was sent: 503 when the drain
    /// stopped it, 504 when its deadline did.
    fn stopped_error(&self, app: &App, e: RunError) -> ApiError {
        let stopped = match self.stopped.get() {
            Some(Stop::Drain) => shut_down(app),
            Some(Stop::Deadline(had)) => timed_out(*had),
            None => return e.into(),
        };
        stopped.with_details(e.details())
    }
}

/// Start streaming the checked `req`: the run hands each event to the returned [`Events`]
/// through one channel (the run's sink sends, the client's body receives: no thread or task
/// between them); the request is cancelled when they are dropped, its deadline passes or the
/// drain ends. The channel never makes a lane wait: a client reading slowly holds at most its
/// reply's events, and the connection's write deadline closes one that stops reading.
pub fn stream(app: &Arc<App>, served: &Served, req: Ready) -> Result<Events, RunError> {
    let cancel = req.request().cancel.clone();
    let runtime = served.runtime.clone();
    stream_work(app, served, cancel, move |sink| {
        runtime.stream_to(&req, sink)
    })
}

/// [`stream`] for any run that `start` sets going with the sink its events go to and that
/// `cancel` stops (a tool loop).
pub fn stream_work(
    app: &Arc<App>,
    served: &Served,
    cancel: Cancel,
    start: impl FnOnce(Sink) -> Result<(), RunError>,
) -> Result<Events, RunError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let ran = Arc::clone(app);
    let gone = cancel.clone();
    start(Sink::new(move |event| {
        if let Event::Failed(e) = &event {
            ran.metrics.cancelled(e);
        }
        if tx.send(event).is_err() {
            // The client went away: stop decoding, let the run wind down.
            gone.cancel();
        }
    }))?;
    let (deadline, had) = (served.deadline, served.timeout);
    let timer_cancel = cancel.clone();
    let timer_app = Arc::clone(app);
    let stopped = Arc::new(OnceLock::new());
    let why = Arc::clone(&stopped);
    tokio::spawn(async move {
        let stop = tokio::select! {
            () = tokio::time::sleep_until(deadline) => Stop::Deadline(had),
            () = drain_over(&timer_app) => Stop::Drain,
        };
        let _ = why.set(stop);
        timer_cancel.cancel();
    });
    Ok(Events {
        rx,
        stopped,
        _cancel: CancelOnDrop(cancel),
    })
}

/// A stream's frames as its response body pulls them: `start` first, then `frames_of` of each
/// event (the route records its metrics there, with the stream's clock) until the run ends.
/// Dropped before the end (the client went away), it counts a disconnect and its events
/// cancel the run.
struct Frames<F, M> {
    events: Events,
    pending: std::collections::VecDeque<F>,
    frames_of: M,
    clock: StreamClock,
    app: Arc<App>,
    ended: bool,
}

impl<F, M> Drop for Frames<F, M> {
    fn drop(&mut self) {
        if !self.ended {
            self.app.metrics.disconnect();
        }
    }
}

/// Stream `req` as a route's frames: `start` first, then `frames_of` of each event until the
/// run ends, made as the response body asks for them. An error before anything was decoded
/// is still an HTTP error, not a stream (a run stopped by the drain's end a 503, by its
/// deadline a 504); a client that goes away cancels the run (its body, holding the events, is
/// dropped).
pub async fn forward<F: Send + 'static>(
    app: &Arc<App>,
    served: &Served,
    req: Ready,
    start: Vec<F>,
    frames_of: impl FnMut(Event, &StreamClock) -> Vec<F> + Send + 'static,
) -> Result<impl futures_util::Stream<Item = F> + Send + 'static, ApiError> {
    forward_events(app, stream(app, served, req)?, start, frames_of).await
}

/// [`forward`] for a run already streaming into `events` ([`stream_work`]).
pub async fn forward_events<F: Send + 'static>(
    app: &Arc<App>,
    mut events: Events,
    start: Vec<F>,
    frames_of: impl FnMut(Event, &StreamClock) -> Vec<F> + Send + 'static,
) -> Result<impl futures_util::Stream<Item = F> + Send + 'static, ApiError> {
    let first = match events.recv().await {
        Some(Event::Failed(e)) if e.kind() == "cancelled" => {
            app.metrics.failed(&e);
            return Err(events.stopped_error(app, e));
        }
        Some(Event::Failed(e)) if e.kind() != "truncated" => {
            app.metrics.failed(&e);
            return Err(e.into());
        }
        other => other,
    };
    let mut frames = Frames {
        events,
        pending: start.into(),
        frames_of,
        clock: StreamClock::start(),
        app: Arc::clone(app),
        ended: false,
    };
    frames.take(first);
    Ok(futures_util::stream::unfold(frames, |mut f| async move {
        loop {
            if let Some(frame) = f.pending.pop_front() {
                return Some((frame, f));
            }
            if f.ended {
                return None;
            }
            let next = f.events.recv().await;
            f.take(next);
        }
    }))
}

impl<F, M: FnMut(Event, &StreamClock) -> Vec<F>> Frames<F, M> {
    /// The frames of `event`; none, and the end, when the run ended.
    fn take(&mut self, event: Option<Event>) {
        let Some(event) = event else {
            self.ended = true;
            return;
        };
        self.clock.seen(&event);
        self.ended = matches!(event, Event::Done(_) | Event::Failed(_));
        self.pending.extend((self.frames_of)(event, &self.clock));
    }
}
