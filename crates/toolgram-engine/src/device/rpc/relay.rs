//! The relay between llama.cpp's RPC client and one worker. llama.cpp connects to the relay's
//! loopback port; the relay connects to the worker and passes every command and reply through,
//! reading the framing (`protocol`) but never the tensors. Its point is failure: llama.cpp's
//! client aborts the whole process when a worker closes the connection and waits forever
//! when it stops answering. The relay bounds every wait on the worker by its timeout, and
//! once the worker is lost — refused, closed, silent past the timeout — it answers every
//! command itself with a stand-in reply and records why, so the decode under way returns and
//! the engine turns the loss into a typed error (`Workers::check`).
//!
//! One connection is relayed at a time (llama.cpp keeps one per worker; a worker serves one
//! client at a time). Buffers are allocated per connection, never per command. This module
//! must not call into llama.cpp.

use super::protocol::{self, Reply};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Bytes moved per read: payloads larger than this (weights, a graph) are streamed through.
const CHUNK: usize = 1 << 16;

/// A relay to one worker, running until the process ends.
#[derive(Debug)]
pub(crate) struct Relay {
    /// The worker, as given (`host:port`).
    pub(crate) worker: String,
    /// Where llama.cpp connects.
    pub(crate) local: SocketAddr,
    /// The longest wait on the worker: to connect, for a reply, for a write to drain.
    pub(crate) timeout: Duration,
    state: Mutex<State>,
}

/// The relayed connection's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct State {
    /// Connections relayed so far; a model's buffers live on one.
    pub(crate) connection: u64,
    /// Whether llama.cpp is connected now.
    pub(crate) connected: bool,
    /// Why this connection's worker is lost (`None`: it answered everything so far).
    pub(crate) lost: Option<String>,
}

impl Relay {
    /// A relay to `worker` on a free loopback port, serving from a thread of its own.
    pub(crate) fn start(worker: &str, timeout: Duration) -> io::Result<Arc<Self>> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let relay = Arc::new(Relay {
            worker: worker.to_owned(),
            local: listener.local_addr()?,
            timeout,
            state: Mutex::new(State::default()),
        });
        let serving = Arc::clone(&relay);
        std::thread::Builder::new()
            .name(format!("rpc relay {worker}"))
            .spawn(move || {
                for client in listener.incoming() {
                    match client {
                        Ok(client) => serving.relay(client),
                        Err(e) => tracing::warn!("rpc relay for {}: {e}", serving.worker),
                    }
                }
            })?;
        Ok(relay)
    }

    /// The state now.
    pub(crate) fn state(&self) -> State {
        self.lock().clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Record the worker as lost (the first reason stands) and say so once.
    fn lose(&self, why: String) {
        let mut state = self.lock();
        if state.lost.is_none() {
            tracing::error!("rpc worker {} lost: {why}", self.worker);
            state.lost = Some(why);
        }
    }

    /// Connect to the worker within the timeout.
    pub(crate) fn connect(&self) -> Result<TcpStream, String> {
        let addrs = self
            .worker
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve it: {e}"))?;
        let mut last = String::from("it has no address");
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, self.timeout) {
                Ok(stream) => {
                    let limit = Some(self.timeout);
                    stream
                        .set_read_timeout(limit)
                        .and_then(|()| stream.set_write_timeout(limit))
                        .and_then(|()| stream.set_nodelay(true))
                        .map_err(|e| e.to_string())?;
                    return Ok(stream);
                }
                Err(e) => last = describe(&e, self.timeout),
            }
        }
        Err(last)
    }

    /// Relay one llama.cpp connection until llama.cpp closes it.
    fn relay(&self, mut client: TcpStream) {
        let _ = client.set_nodelay(true);
        {
            let mut state = self.lock();
            state.connection += 1;
            state.connected = true;
            state.lost = None;
        }
        let mut worker = match self.connect() {
            Ok(stream) => Some(stream),
            Err(why) => {
                self.lose(why);
                None
            }
        };
        let mut buf = vec![0u8; CHUNK];
        // llama.cpp says HELLO at once; anything else on this port that sends nothing must not
        // hold the relay (and llama.cpp's connection lock) forever. Then llama.cpp may be idle
        // between requests for as long as it likes.
        if client.set_read_timeout(Some(self.timeout)).is_err()
            || self.command(&mut client, &mut worker, &mut buf).is_err()
            || client.set_read_timeout(None).is_err()
        {
            self.lock().connected = false;
            return;
        }
        while self.command(&mut client, &mut worker, &mut buf).is_ok() {}
        self.lock().connected = false;
    }

    /// Pass one command (and its reply) through; `Err` when llama.cpp's side closed.
    fn command(
        &self,
        client: &mut TcpStream,
        worker: &mut Option<TcpStream>,
        buf: &mut [u8],
    ) -> io::Result<()> {
        let mut head = [0u8; 9];
        client.read_exact(&mut head)?;
        let cmd = head[0];
        let mut size = [0u8; 8];
        size.copy_from_slice(&head[1..]);
        let size = u64::from_le_bytes(size);
        let Some(reply) = protocol::reply(cmd) else {
            // Not this protocol's command: llama.cpp and this table disagree; nothing read
            // after it can be framed.
            self.lose(format!(
                "llama.cpp sent command {cmd}, unknown to the relay"
            ));
            return Err(ErrorKind::InvalidData.into());
        };
        self.send(worker, &head);
        // The request, streamed through; a small one is kept whole (GET_TENSOR's asked size
        // is its last field).
        let mut asked = 0u64;
        let mut left = size;
        while left > 0 {
            let n = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
            client.read_exact(&mut buf[..n])?;
            self.send(worker, &buf[..n]);
            left -= n as u64;
            if left == 0 && n >= 8 {
                let mut last = [0u8; 8];
                last.copy_from_slice(&buf[n - 8..n]);
                asked = u64::from_le_bytes(last);
            }
        }
        let want = match reply {
            Reply::None => return Ok(()),
            Reply::Fixed(n) => n as u64,
            Reply::Asked => asked,
        };
        client.write_all(&want.to_le_bytes())?;
        let mut sent = 0u64;
        if let Some(w) = worker.as_mut() {
            match pass_reply(w, client, want, buf, &mut sent) {
                Ok(()) => return client.flush(),
                Err(Failure::Client(e)) => return Err(e),
                Err(Failure::Worker(why)) => {
                    *worker = None;
                    self.lose(describe_reply(&why, self.timeout));
                }
            }
        }
        // The worker is lost: the rest of the reply is the stand-in's.
        if sent == 0 && want as usize <= buf.len() {
            let out = &mut buf[..want as usize];
            out.fill(0);
            protocol::stand_in(cmd, out);
            client.write_all(out)?;
        } else {
            buf.fill(0);
            let mut left = want - sent;
            while left > 0 {
                let n = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
                client.write_all(&buf[..n])?;
                left -= n as u64;
            }
        }
        client.flush()
    }

    /// Write to the worker while it is there; a failed write loses it.
    fn send(&self, worker: &mut Option<TcpStream>, bytes: &[u8]) {
        if let Some(w) = worker.as_mut()
            && let Err(e) = w.write_all(bytes)
        {
            *worker = None;
            self.lose(describe(&e, self.timeout));
        }
    }
}

enum Failure {
    /// llama.cpp's side closed.
    Client(io::Error),
    /// The worker closed, failed or fell silent.
    Worker(io::Error),
}

/// Copy the worker's reply (its size must be `want`) to llama.cpp, counting what was sent.
fn pass_reply(
    worker: &mut TcpStream,
    client: &mut TcpStream,
    want: u64,
    buf: &mut [u8],
    sent: &mut u64,
) -> Result<(), Failure> {
    let mut size = [0u8; 8];
    worker.read_exact(&mut size).map_err(Failure::Worker)?;
    if u64::from_le_bytes(size) != want {
        return Err(Failure::Worker(io::Error::new(
            ErrorKind::InvalidData,
            format!(
                "it replied with {} bytes where {want} were due (another protocol?)",
                u64::from_le_bytes(size)
            ),
        )));
    }
    while *sent < want {
        let n = usize::try_from(want - *sent).map_or(buf.len(), |l| l.min(buf.len()));
        let got = worker.read(&mut buf[..n]).map_err(Failure::Worker)?;
        if got == 0 {
            return Err(Failure::Worker(ErrorKind::UnexpectedEof.into()));
        }
        client.write_all(&buf[..got]).map_err(Failure::Client)?;
        *sent += got as u64;
    }
    Ok(())
}

/// Why a connection or write failed, in words.
pub(super) fn describe(e: &io::Error, timeout: Duration) -> String {
    match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => {
            format!("it did not answer within {} s", timeout.as_secs_f32())
        }
        ErrorKind::ConnectionRefused => {
            "it refused the connection (is `toolgram worker` running there?)".into()
        }
        ErrorKind::ConnectionReset | ErrorKind::BrokenPipe | ErrorKind::UnexpectedEof => {
            "it closed the connection (the worker stopped?)".into()
        }
        _ => e.to_string(),
    }
}

/// Why a reply did not come, in words.
fn describe_reply(e: &io::Error, timeout: Duration) -> String {
    match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => {
            format!("it sent no reply within {} s", timeout.as_secs_f32())
        }
        _ => describe(e, timeout),
    }
}
