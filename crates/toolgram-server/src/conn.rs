//! Accepting connections, with the bounds `axum::serve` does not set: at most
//! `max_connections` open at once (one more is answered 503 naming the limit, then closed);
//! each served by hyper's HTTP/1 with its timer, so a client that takes longer than
//! `header_read_timeout` to send a request's headers — or leaves a kept-alive connection idle
//! that long — is closed, and so is one that reads nothing of its reply for `write_timeout`
//! ([`crate::write_deadline`]); and a drain with a bound: on the shutdown signal nothing more is
//! accepted, idle connections close, requests in flight get `drain_timeout` to finish; runs
//! still going then are stopped and answer with what they decoded (a 503 with the partial
//! text and usage, or a stream's error event), and connections still open after that are
//! dropped (a dropped handler cancels its run, as when its client leaves). This module must not read or answer requests: the router does.

use crate::app::App;
use crate::write_deadline::WriteDeadline;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

/// Over-limit connections answered at once; more are closed without an answer.
const MAX_REFUSING: usize = 64;

/// How long an over-limit connection is kept to read its request (so closing it does not
/// reset the 503 away) before it is closed.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);

/// How long after a stopped run's reply its connection may take to write it.
const REPLY_LINGER: Duration = Duration::from_secs(1);

async fn all_closed(conns: &mut JoinSet<()>) {
    while conns.join_next().await.is_some() {}
}

/// Serve `app` on `listener` until `shutdown` completes, then drain within the bound.
pub async fn serve_on(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let router = crate::router(Arc::clone(&app));
    let config = &app.config;
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut conns = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors or a connection reset before it was accepted: wait
                    // a little rather than spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        match Arc::clone(&slots).try_acquire_owned() {
            Ok(slot) => {
                let service = TowerToHyperService::new(router.clone());
                let limits = (config.header_read_timeout, config.write_timeout);
                conns.spawn(connection(stream, service, limits, stop_rx.clone(), slot));
            }
            Err(_) => {
                app.metrics.refused_connection();
                if let Ok(turn) = Arc::clone(&refusing).try_acquire_owned() {
                    tokio::spawn(refuse(stream, config.max_connections, turn));
                }
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let drain = config.drain_timeout;
    if tokio::time::timeout(drain, all_closed(&mut conns))
        .await
        .is_err()
    {
        eprintln!(
            "toolgram serve: {} connection(s) still open after the {} s drain (--drain-timeout-s): their runs stopped, answering with what they decoded",
            conns.len(),
            drain.as_secs_f64()
        );
        let _ = app.drain_over.send(true);
        let answering = crate::run::STOP_GRACE + REPLY_LINGER;
        if tokio::time::timeout(answering, all_closed(&mut conns))
            .await
            .is_err()
        {
            conns.shutdown().await;
        }
    }
    Ok(())
}

/// One connection with its header read and write timeouts, closed gracefully (after the
/// request in flight, at once when idle) once `stop` turns true.
async fn connection(
    stream: TcpStream,
    service: TowerToHyperService<axum::Router>,
    (header_read_timeout, write_timeout): (Duration, Duration),
    mut stop: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let io = TokioIo::new(WriteDeadline::new(stream, write_timeout));
    let mut conn = pin!(builder.serve_connection(io, service));
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|stop| *stop) => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}

/// Answer a connection over the limit with a 503 naming it, read what it sent for a moment
/// (closing a socket with unread bytes would reset the answer away), then close it.
async fn refuse(mut stream: TcpStream, max: usize, _turn: OwnedSemaphorePermit) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = serde_json::json!({"error": {
        "message": format!("the server has {max} connections open, its limit (--max-connections); try again shortly"),
        "type": "server_error", "param": null, "code": "too_many_connections"}})
    .to_string();
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let linger = async {
        stream.write_all(reply.as_bytes()).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    };
    let _ = tokio::time::timeout(REFUSAL_LINGER, linger).await;
}
