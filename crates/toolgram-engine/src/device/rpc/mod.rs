//! A model's layers on other hosts, through ggml's RPC backend (the one llama-server's
//! `--rpc` and llama.cpp's `rpc-server` use): [`serve_worker`] lends this machine's devices
//! (`toolgram worker`), [`attach`] makes workers' devices ones a model can load onto
//! (`--rpc HOST:PORT,…`). The decoding host keeps the grammar, the mask and the sampler; only
//! the layers' tensors and activations cross the network.
//!
//! Every worker is reached through a [`relay`] on a loopback port of this process, so that a
//! worker that closes or falls silent becomes a typed error ([`Workers::check`]) instead of
//! llama.cpp's abort or endless wait. A worker is probed (a HELLO within the timeout) before
//! llama.cpp is given it: llama.cpp itself aborts on a refused connection.
//!
//! ggml RPC has no authentication or encryption: a worker binds to loopback unless told
//! otherwise. This module must not decode or choose how many layers go where (`gpu` does).

mod protocol;
mod relay;

use crate::error::EngineError;
use relay::Relay;
use serde_json::{Value, json};
use std::ffi::{CStr, CString, c_char};
use std::io::{Read, Write};
use std::net::{TcpListener, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a worker may take to connect or to answer one step, unless told otherwise
/// (`--rpc-timeout-s`): long enough for a slow host's share of a 512-token prompt batch.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// One relay per worker, started once per process and registered with ggml once: ggml keeps
/// a worker's devices for the life of the process.
static RELAYS: Mutex<Vec<Link>> = Mutex::new(Vec::new());

/// The connection noted for a worker that holds none of a model's buffers.
const UNUSED: u64 = u64::MAX;

/// A worker as a model uses it.
#[derive(Debug, Clone)]
struct Link {
    relay: Arc<Relay>,
    /// ggml's names of the worker's devices (`RPC0`, …): what a model's device list takes.
    devices: Vec<String>,
}

/// The workers a model's layers are on.
#[derive(Debug, Clone, Default)]
pub struct Workers {
    links: Vec<Link>,
    /// Each link's relayed connection when the model was loaded: its buffers live there.
    connections: Vec<u64>,
}

impl PartialEq for Workers {
    fn eq(&self, other: &Self) -> bool {
        self.endpoints() == other.endpoints() && self.connections == other.connections
    }
}

impl Eq for Workers {}

impl Workers {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The workers, as given.
    pub fn endpoints(&self) -> Vec<&str> {
        self.links.iter().map(|l| l.relay.worker.as_str()).collect()
    }

    /// ggml's names of every worker's devices.
    pub(crate) fn device_names(&self) -> impl Iterator<Item = &str> {
        self.links
            .iter()
            .flat_map(|l| l.devices.iter().map(String::as_str))
    }

    /// The worker holding ggml's device `name`, for saying where layers went.
    pub(crate) fn worker_of(&self, device: &str) -> Option<&str> {
        self.links
            .iter()
            .find(|l| l.devices.iter().any(|d| d == device))
            .map(|l| l.relay.worker.as_str())
    }

    /// Note the connections the model's buffers were just put on. A worker with no
    /// connection open holds none of them (it got no layers) and is not watched.
    pub(crate) fn settle(&mut self) {
        self.connections = self
            .links
            .iter()
            .map(|l| {
                let state = l.relay.state();
                if state.connected {
                    state.connection
                } else {
                    tracing::warn!("rpc worker {} got no layers", l.relay.worker);
                    UNUSED
                }
            })
            .collect();
    }

    /// `Ok` while every worker holding the model's layers answers; the first lost one, as a
    /// typed error, after that (the model's layers there are gone: load it again once the
    /// worker is back).
    pub fn check(&self) -> Result<(), EngineError> {
        match self.lost().next() {
            Some((link, reason)) => Err(EngineError::Worker {
                worker: link.relay.worker.clone(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// Each lost worker and why.
    fn lost(&self) -> impl Iterator<Item = (&Link, String)> {
        self.links
            .iter()
            .zip(&self.connections)
            .filter_map(|(link, connection)| {
                let state = link.relay.state();
                if *connection == UNUSED {
                    return None;
                }
                match state.lost {
                    Some(why) => Some((link, why)),
                    None if state.connection != *connection || !state.connected => Some((
                        link,
                        "its connection closed; the layers it held are gone".to_owned(),
                    )),
                    None => None,
                }
            })
    }

    /// Each worker and whether it holds its layers (`/health`, `toolgram.timings.offload`).
    pub fn to_json(&self) -> Value {
        let lost: Vec<(&str, String)> = self
            .lost()
            .map(|(l, why)| (l.relay.worker.as_str(), why))
            .collect();
        Value::Array(
            self.links
                .iter()
                .enumerate()
                .map(|(i, link)| {
                    let worker = link.relay.worker.as_str();
                    let unused = self.connections.get(i) == Some(&UNUSED);
                    match lost.iter().find(|(w, _)| *w == worker) {
                        None if unused => json!({"worker": worker, "devices": link.devices,
                            "state": "no layers"}),
                        None => json!({"worker": worker, "devices": link.devices, "state": "up"}),
                        Some((_, why)) => json!({"worker": worker, "devices": link.devices,
                            "state": "lost", "error": why}),
                    }
                })
                .collect(),
        )
    }
}

/// The workers at `endpoints` (`host:port`), each answering a HELLO within `timeout`, their
/// devices known to ggml.
pub(crate) fn attach(endpoints: &[String], timeout: Duration) -> Result<Workers, EngineError> {
    let mut workers = Workers::default();
    for endpoint in endpoints {
        let link = link(endpoint, timeout)?;
        if workers
            .links
            .iter()
            .any(|l| Arc::ptr_eq(&l.relay, &link.relay))
        {
            continue;
        }
        workers.links.push(link);
    }
    Ok(workers)
}

/// The worker at `endpoint`: its relay (started on first use) and its devices.
fn link(endpoint: &str, timeout: Duration) -> Result<Link, EngineError> {
    let lost = |reason: String| EngineError::Worker {
        worker: endpoint.to_owned(),
        reason,
    };
    let mut relays = RELAYS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(at) = relays.iter().position(|l| l.relay.worker == endpoint) {
        let state = relays[at].relay.state();
        match state.lost {
            Some(why) if state.connected => return Err(lost(why)),
            // Held by another model of this process: it answered its last step.
            None if state.connected => return Ok(relays[at].clone()),
            None => {
                probe(&relays[at].relay)?;
                return Ok(relays[at].clone());
            }
            // Lost before, and let go: llama.cpp keeps what the stand-in replies said (its
            // alignment, sizes) per endpoint for the life of the process, so the worker gets a
            // new relay, a new endpoint to llama.cpp.
            Some(_) => {
                relays.remove(at);
            }
        }
    }
    let rpc = rpc_reg()?;
    let relay = Relay::start(endpoint, timeout).map_err(|e| lost(e.to_string()))?;
    probe(&relay)?;
    let add_server = proc_address(rpc, c"ggml_backend_rpc_add_server")?;
    // SAFETY: ggml's `ggml_backend_rpc_add_server_t` (`ggml-rpc.h`).
    let add_server: unsafe extern "C" fn(*const c_char) -> llama_cpp_sys_2::ggml_backend_reg_t =
        unsafe { std::mem::transmute(add_server) };
    let local = CString::new(relay.local.to_string()).map_err(|e| lost(e.to_string()))?;
    // SAFETY: a NUL-terminated endpoint; ggml copies it.
    let reg = unsafe { add_server(local.as_ptr()) };
    if let Some(why) = relay.state().lost {
        return Err(lost(why));
    }
    if reg.is_null() {
        return Err(lost("it offers no device".into()));
    }
    // SAFETY: `reg` is the worker's registry entry, alive for the process.
    let devices = unsafe {
        llama_cpp_sys_2::ggml_backend_register(reg);
        (0..llama_cpp_sys_2::ggml_backend_reg_dev_count(reg))
            .map(|i| {
                let dev = llama_cpp_sys_2::ggml_backend_reg_dev_get(reg, i);
                CStr::from_ptr(llama_cpp_sys_2::ggml_backend_dev_name(dev))
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    };
    let link = Link { relay, devices };
    tracing::info!(
        "rpc worker {endpoint}: devices {} (relayed at {})",
        link.devices.join(", "),
        link.relay.local
    );
    relays.push(link.clone());
    Ok(link)
}

/// A HELLO to the worker itself, within the relay's timeout: llama.cpp aborts the process on
/// a worker it cannot reach, so none is handed to it unprobed. A worker busy with another
/// client answers nobody else (it serves one at a time): that too is a timeout.
fn probe(relay: &Relay) -> Result<(), EngineError> {
    let lost = |reason: String| EngineError::Worker {
        worker: relay.worker.clone(),
        reason,
    };
    let mut stream = relay.connect().map_err(lost)?;
    let timeout = |e: std::io::Error| {
        let why = relay::describe(&e, relay.timeout);
        lost(format!(
            "{why} (a worker serves one client at a time: is another using it?)"
        ))
    };
    stream
        .write_all(&protocol::hello_request())
        .map_err(timeout)?;
    let mut size = [0u8; 8];
    let mut reply = [0u8; protocol::HELLO_REPLY];
    stream.read_exact(&mut size).map_err(timeout)?;
    stream.read_exact(&mut reply).map_err(timeout)?;
    let version = protocol::read_hello(size, &reply).map_err(lost)?;
    tracing::debug!("rpc worker {}: protocol {version}", relay.worker);
    Ok(())
}

/// ggml's RPC backend, or why this build has none.
fn rpc_reg() -> Result<llama_cpp_sys_2::ggml_backend_reg_t, EngineError> {
    // SAFETY: a NUL-terminated name; ggml's registry outlives the process's users.
    let reg = unsafe { llama_cpp_sys_2::ggml_backend_reg_by_name(c"RPC".as_ptr()) };
    if reg.is_null() {
        return Err(EngineError::Gpu(
            "this toolgram was built without ggml's RPC backend: build it with GGML_RPC=ON \
             (the repository's .cargo/config.toml sets it; after changing it, \
             `cargo clean -p llama-cpp-sys-2 --release` rebuilds llama.cpp)"
                .into(),
        ));
    }
    Ok(reg)
}

fn proc_address(
    reg: llama_cpp_sys_2::ggml_backend_reg_t,
    name: &CStr,
) -> Result<*mut std::ffi::c_void, EngineError> {
    // SAFETY: a live registry entry and a NUL-terminated name.
    let f = unsafe { llama_cpp_sys_2::ggml_backend_reg_get_proc_address(reg, name.as_ptr()) };
    if f.is_null() {
        return Err(EngineError::Gpu(format!(
            "ggml's RPC backend has no {}",
            name.to_string_lossy()
        )));
    }
    Ok(f)
}

/// Lend this machine's devices to other hosts' models at `listen` (`host:port`) with `threads`
/// CPU threads: its GPUs where it has any, else its CPU. Runs until the process ends; returns
/// only when it cannot start.
pub fn serve_worker(listen: &str, threads: usize) -> Result<(), EngineError> {
    let refuse = |reason: String| EngineError::Worker {
        worker: listen.to_owned(),
        reason,
    };
    // ggml would only print that it could not bind: find out first, with a reason.
    let addr = listen
        .to_socket_addrs()
        .map_err(|e| refuse(format!("not a host:port ({e})")))?
        .next()
        .ok_or_else(|| refuse("it has no address".into()))?;
    drop(TcpListener::bind(addr).map_err(|e| refuse(format!("cannot listen there: {e}")))?);
    let _backend = crate::backend::backend()?;
    let rpc = rpc_reg()?;
    let start = proc_address(rpc, c"ggml_backend_rpc_start_server")?;
    // SAFETY: ggml's `ggml_backend_rpc_start_server` (`ggml-rpc.h`).
    let start: unsafe extern "C" fn(
        *const c_char,
        *const c_char,
        usize,
        usize,
        *mut llama_cpp_sys_2::ggml_backend_dev_t,
    ) = unsafe { std::mem::transmute(start) };
    let mut devices = lendable_devices();
    if devices.is_empty() {
        return Err(refuse("this machine has no device to lend".into()));
    }
    let endpoint = CString::new(listen).map_err(|e| refuse(e.to_string()))?;
    // SAFETY: live device handles and a NUL-terminated endpoint; it blocks while serving.
    unsafe {
        start(
            endpoint.as_ptr(),
            std::ptr::null(),
            threads,
            devices.len(),
            devices.as_mut_ptr(),
        );
    }
    Err(refuse(
        "ggml's RPC server stopped (see its output above)".into(),
    ))
}

/// The GPUs ggml found, or the CPU where there are none (as llama.cpp's `rpc-server`).
fn lendable_devices() -> Vec<llama_cpp_sys_2::ggml_backend_dev_t> {
    // SAFETY: indices below ggml's device count.
    let all: Vec<_> = unsafe {
        (0..llama_cpp_sys_2::ggml_backend_dev_count())
            .map(|i| llama_cpp_sys_2::ggml_backend_dev_get(i))
            .collect()
    };
    let kind = |dev| unsafe { llama_cpp_sys_2::ggml_backend_dev_type(dev) };
    let gpus: Vec<_> = all
        .iter()
        .copied()
        .filter(|&d| {
            let k = kind(d);
            k == llama_cpp_sys_2::GGML_BACKEND_DEVICE_TYPE_GPU
                || k == llama_cpp_sys_2::GGML_BACKEND_DEVICE_TYPE_IGPU
        })
        .collect();
    if !gpus.is_empty() {
        return gpus;
    }
    all.into_iter()
        .filter(|&d| kind(d) == llama_cpp_sys_2::GGML_BACKEND_DEVICE_TYPE_CPU)
        .take(1)
        .collect()
}

/// Whether `listen` keeps a worker on this machine (loopback).
pub fn is_loopback(listen: &str) -> bool {
    listen
        .to_socket_addrs()
        .map(|mut addrs| addrs.all(|a| a.ip().is_loopback()))
        .unwrap_or(false)
}
