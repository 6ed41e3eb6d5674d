//! The server's shared state: the runtime (one for every request, so the session cache is
//! shared), the settings, the counters, and the Responses store. This module must not
//! handle requests.

use crate::error::ApiError;
use crate::metrics::Metrics;
use axum::http::StatusCode;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use toolgram_core::ChatMessage;
use toolgram_runtime::Runtime;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind.
    pub host: String,
    /// Port (0: any free port).
    pub port: u16,
    /// Clients must send `Authorization: Bearer <key>` when set.
    pub api_key: Option<String>,
    /// Largest request body in bytes (413 above).
    pub max_body_bytes: usize,
    /// Longest a request may run, queueing excluded.
    pub timeout: Duration,
    /// Stored Responses kept for `previous_response_id`.
    pub max_stored_responses: usize,
    /// Tokens a reply may have: the default when a request names none, and the most one may
    /// ask for (more is a 400, never a silent cut).
    pub max_tokens: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 8080,
            api_key: None,
            max_body_bytes: 4 << 20,
            timeout: Duration::from_secs(300),
            max_stored_responses: 256,
            max_tokens: 2048,
        }
    }
}

/// A stored response: the conversation it ended, for `previous_response_id`.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The response id.
    pub id: String,
    /// Every message up to and including the reply.
    pub messages: Vec<ChatMessage>,
    /// The response object as it was returned.
    pub body: Value,
}

/// Everything the handlers share.
pub struct App {
    /// The run stage.
    pub runtime: Runtime,
    /// Settings.
    pub config: ServerConfig,
    /// Counters.
    pub metrics: Metrics,
    /// Responses kept for `previous_response_id`, oldest first.
    pub stored: Mutex<VecDeque<Stored>>,
    model_id: String,
    counter: AtomicU64,
}

impl App {
    /// The state for `runtime`.
    pub fn new(runtime: Runtime, config: ServerConfig) -> Self {
        let name = runtime.model_name();
        let model_id = match name.strip_suffix(".gguf") {
            Some(stem) => stem.to_owned(),
            None if name.is_empty() => "toolgram".to_owned(),
            None => name,
        };
        Self {
            runtime,
            config,
            metrics: Metrics::default(),
            stored: Mutex::new(VecDeque::new()),
            model_id,
            counter: AtomicU64::new(0),
        }
    }

    /// The id `/v1/models` lists.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Accept the served model's id, its file name, `toolgram` or `default`.
    pub fn check_model(&self, model: Option<&str>) -> Result<(), ApiError> {
        match model {
            None => Ok(()),
            Some(m)
                if m == self.model_id
                    || m == "toolgram"
                    || m == "default"
                    || m.strip_suffix(".gguf") == Some(&self.model_id) =>
            {
                Ok(())
            }
            Some(m) => Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "model_not_found",
                format!(
                    "the model `{m}` does not exist here; this server serves `{}` (GET /v1/models)",
                    self.model_id
                ),
            )
            .param("model")),
        }
    }

    /// Seconds since the epoch.
    pub fn now(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// A new id with `prefix`.
    pub fn new_id(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        format!("{prefix}-{t:x}{n:04x}")
    }

    /// Keep a response for `previous_response_id`, dropping the oldest past the bound.
    pub fn store(&self, s: Stored) {
        let mut q = self.stored.lock().unwrap_or_else(|e| e.into_inner());
        q.push_back(s);
        while q.len() > self.config.max_stored_responses {
            q.pop_front();
        }
    }

    /// A stored response.
    pub fn stored(&self, id: &str) -> Option<Stored> {
        let q = self.stored.lock().unwrap_or_else(|e| e.into_inner());
        q.iter().find(|s| s.id == id).cloned()
    }
}
