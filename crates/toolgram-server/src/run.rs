//! Running a request from async handlers: the runtime's blocking calls on tokio's blocking
//! pool, the request cancelled when its handler is dropped (the client went away) or its
//! time runs out, and a stream's events forwarded to an async channel. A cancelled run's
//! tokens are counted here, where its result ends (nobody reads it); a stream's frames
//! forwarded to its client ([`forward`]). This module must not build replies.

use crate::app::App;
use crate::error::ApiError;
use crate::metrics::StreamClock;
use axum::http::StatusCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use toolgram_runtime::{Cancel, Event, Request, Response, RunError};

/// Cancels the request when dropped: a handler dropped mid-run means its client is gone.
pub struct CancelOnDrop(pub Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

fn timed_out(timeout: Duration) -> ApiError {
    ApiError::new(
        StatusCode::GATEWAY_TIMEOUT,
        "timeout_error",
        "timeout",
        format!("the request took longer than {} s", timeout.as_secs()),
    )
}

/// Run `req` to its reply within the server's timeout.
pub async fn run(app: &Arc<App>, req: Request) -> Result<Result<Response, RunError>, ApiError> {
    let timeout = app.config.timeout;
    let guard = CancelOnDrop(req.cancel.clone());
    let ran = Arc::clone(app);
    let task = tokio::task::spawn_blocking(move || {
        let result = ran.runtime.run(&req);
        if let Err(e) = &result {
            ran.metrics.cancelled(e);
        }
        result
    });
    let out = match tokio::time::timeout(timeout, task).await {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(join)) => Err(ApiError::internal("the run", join)),
        Err(_) => Err(timed_out(timeout)),
    };
    drop(guard);
    out
}

/// Start streaming `req`: the events arrive on the returned channel; the request is
/// cancelled when the channel's receiver is dropped or the server's timeout passes.
pub fn stream(app: &Arc<App>, req: Request) -> Result<mpsc::Receiver<Event>, RunError> {
    let timeout = app.config.timeout;
    let cancel = req.cancel.clone();
    let events = app.runtime.stream(&req)?;
    let ran = Arc::clone(app);
    let (tx, rx) = mpsc::channel(64);
    let deadline = tokio::time::Instant::now() + timeout;
    let timer_cancel = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep_until(deadline).await;
        timer_cancel.cancel();
    });
    tokio::task::spawn_blocking(move || {
        for event in events {
            if let Event::Failed(e) = &event {
                ran.metrics.cancelled(e);
            }
            if tx.blocking_send(event).is_err() {
                // The client went away: stop decoding, let the run wind down.
                cancel.cancel();
            }
        }
    });
    Ok(rx)
}

/// Stream `req` as a route's frames: `start` first, then `frames_of` of each event (the route
/// records its metrics there, with the stream's clock) until the run ends. An error before
/// anything was decoded is still an HTTP error, not a stream; a client that goes away cancels
/// the run (its events are dropped).
pub async fn forward<F: Send + 'static>(
    app: &Arc<App>,
    req: Request,
    start: Vec<F>,
    mut frames_of: impl FnMut(Event, &StreamClock) -> Vec<F> + Send + 'static,
) -> Result<mpsc::Receiver<F>, ApiError> {
    let mut events = stream(app, req)?;
    let first = match events.recv().await {
        Some(Event::Failed(e)) if e.kind() != "truncated" => {
            app.metrics.failed(&e);
            return Err(e.into());
        }
        other => other,
    };
    let (tx, rx) = mpsc::channel::<F>(64);
    let app = Arc::clone(app);
    tokio::spawn(async move {
        let mut clock = StreamClock::start();
        let mut pending = start;
        let mut next = first;
        loop {
            for f in pending {
                if tx.send(f).await.is_err() {
                    // The client went away; dropping `events` cancels the run.
                    app.metrics.disconnect();
                    return;
                }
            }
            let Some(event) = next else { return };
            clock.seen(&event);
            let last = matches!(event, Event::Done(_) | Event::Failed(_));
            pending = frames_of(event, &clock);
            next = if last { None } else { events.recv().await };
        }
    });
    Ok(rx)
}
