//! The process's llama.cpp backend: initialised when the first user needs it, shared by every
//! engine (each holds it until its model and contexts are freed) and freed with the last one,
//! so nothing of llama.cpp outlives the engines — nothing is left for the process's exit
//! (where a GPU runtime may already be shutting down, issue 48). llama.cpp's log goes to
//! `tracing`. This module must not load a model or choose a device.

use crate::error::EngineError;
use llama_cpp_2::llama_backend::LlamaBackend;
use std::sync::{Arc, Mutex, MutexGuard, Once, Weak};

/// The backend while anyone holds it; it holds nothing itself.
static BACKEND: Mutex<Weak<Backend>> = Mutex::new(Weak::new());

static LOGS: Once = Once::new();

/// llama.cpp's backend, freed under [`BACKEND`]'s lock so a new one cannot be initialised
/// while the last is still being freed.
pub(crate) struct Backend(Option<LlamaBackend>);

impl Backend {
    /// llama.cpp's handle, for loading models and opening contexts.
    pub(crate) fn llama(&self) -> &LlamaBackend {
        // Set at construction and taken only in `drop`.
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("a backend is set until dropped"))
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        let _held = lock();
        drop(self.0.take());
    }
}

fn lock() -> MutexGuard<'static, Weak<Backend>> {
    BACKEND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The backend, initialised if nobody holds it.
pub(crate) fn backend() -> Result<Arc<Backend>, EngineError> {
    let mut held = lock();
    if let Some(b) = held.upgrade() {
        return Ok(b);
    }
    LOGS.call_once(|| llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default()));
    let b = LlamaBackend::init().map_err(|e| EngineError::ModelLoad {
        path: String::new(),
        reason: format!("llama.cpp backend: {e}"),
    })?;
    let b = Arc::new(Backend(Some(b)));
    *held = Arc::downgrade(&b);
    Ok(b)
}

/// Whether a backend is initialised now (for tests of the engine's teardown).
#[cfg(test)]
pub(crate) fn alive() -> bool {
    lock().strong_count() > 0
}

#[cfg(test)]
mod tests;
