//! The process's one llama.cpp backend: initialised on first use, with llama.cpp's log sent
//! to `tracing`. Model loads, contexts and the device list all go through it. This module must
//! not load a model or choose a device.

use crate::error::EngineError;
use llama_cpp_2::llama_backend::LlamaBackend;
use std::sync::OnceLock;

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// The backend, initialised once.
pub(crate) fn backend() -> Result<&'static LlamaBackend, EngineError> {
    let b = BACKEND.get_or_init(|| {
        llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
        LlamaBackend::init().map_err(|e| e.to_string())
    });
    b.as_ref().map_err(|e| EngineError::ModelLoad {
        path: String::new(),
        reason: format!("llama.cpp backend: {e}"),
    })
}
