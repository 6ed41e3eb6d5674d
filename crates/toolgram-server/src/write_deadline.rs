//! A connection's write deadline: a write that the client has not made room for (its socket
//! full — a client that stopped reading) within the limit fails with `TimedOut`, so hyper
//! closes the connection and the request's run is cancelled as when its client leaves. Only
//! time spent waiting to write counts: a stream that is quiet between events never trips it.
//! This module must not read or answer requests.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// `inner` whose writes fail once one has waited `limit`.
pub struct WriteDeadline<S> {
    inner: S,
    limit: Duration,
    /// Running while a write waits; reset by any progress.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteDeadline<S> {
    /// `inner` with writes bounded by `limit`.
    pub fn new(inner: S, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            stalled: None,
        }
    }

    /// A write that made progress (or failed) resets the clock; one that waits runs it.
    fn after<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let limit = self.limit;
        let clock = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match clock.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client read nothing for {} s (--write-timeout-s)",
                    limit.as_secs_f64()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.after(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.after(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.after(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.after(cx, polled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_write_the_reader_never_makes_room_for_fails_at_the_limit() {
        let (near, _far) = tokio::io::duplex(64);
        let mut w = WriteDeadline::new(near, Duration::from_millis(100));
        let started = std::time::Instant::now();
        let e = w.write_all(&[0u8; 4096]).await.expect_err("times out");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_reader_that_keeps_reading_is_never_cut_however_long_it_takes() {
        let (near, mut far) = tokio::io::duplex(64);
        let reader = tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut got = Vec::new();
            let mut buf = [0u8; 16];
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
                match far.read(&mut buf).await {
                    Ok(0) | Err(_) => return got.len(),
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
        });
        let mut w = WriteDeadline::new(near, Duration::from_millis(100));
        w.write_all(&[1u8; 2048]).await.expect("written slowly");
        w.shutdown().await.expect("closed");
        drop(w);
        assert_eq!(reader.await.expect("joins"), 2048);
    }
}
