//! # toolgram-server — `toolgram serve`
//!
//! An OpenAI- and Anthropic-compatible HTTP server on the run stage: change one base URL and
//! the `openai` and `anthropic` SDKs, agent frameworks, coding agents and editors get tool
//! calls that are valid by construction. Every
//! request goes to the shared [`toolgram_runtime::Runtime`] of the model it names (a
//! [`toolgram_runtime::ModelSet`]: one model or several, loaded on first use), so each model's
//! tool-prefix session cache serves all clients; this crate reads requests and writes replies,
//! nothing else.
//!
//! Contents:
//! - [`app`] — shared state and settings ([`ServerConfig`]);
//! - [`chat`] — `POST /v1/chat/completions`, JSON and Server-Sent Events;
//! - [`responses`] — `POST /v1/responses`, JSON and its typed stream events;
//! - [`anthropic`] — `POST /v1/messages` and `/v1/messages/count_tokens`, Anthropic's shapes;
//!
//!   each API the same three modules: `read` (the body into a runtime request), `wire` (the
//!   reply and its events into the API's JSON and SSE: the one place its shape is built) and
//!   the handlers connecting them;
//! - [`handler`] — the one shape of a handler's first half: the body, the model, the API's
//!   reader and the check, off the async workers;
//! - [`routes`] — every API's `routes()` merged, the server's own routes and the layers over
//!   them (key, loopback guard, counts);
//! - [`body_json`] — a body read as JSON, a key given twice refused;
//! - [`params`] — request fields read one by one into typed 400s;
//! - [`clip`] — client text cut short where the server repeats it (notes, errors, logs);
//! - [`error`] — OpenAI-shaped errors and their statuses;
//! - [`run`] — the runtime's blocking calls from async handlers, with cancellation;
//! - [`mcp`] — the MCP servers declared at start as a request names them (Responses' `mcp`
//!   tools, Anthropic's `mcp_servers`), their tools in its pool, its tool loop run;
//! - [`sse`] — Server-Sent Events bodies from channels;
//! - [`metrics`] — `GET /metrics`;
//! - [`guard`] — what a request must show before it is read (loopback `Host`/`Origin`, the
//!   key in constant time, a JSON content type);
//! - [`conn`] — accepting connections: the connection cap, header and idle timeouts, the
//!   bounded drain;
//! - [`write_deadline`] — a connection's writes bounded in time (a client that reads nothing).
//!
//! Also: `GET /v1/models`, `GET /health`, `GET /openapi.json` (the document in this crate,
//! tested against the routes), an optional API key (`Authorization: Bearer` or
//! `x-api-key`), a request's `model` picking one of several models (aliases; any other name
//! served by the default model, or a 404 under `strict_model_names`), hosted tools left out and listed, a body limit (413) and a body read timeout
//! (408), a bounded queue (429 with `Retry-After`), a per-request timeout, cancellation when
//! the client goes away, and graceful shutdown on SIGTERM or Ctrl-C within a bound.
//!
//! This crate must not compile, decode, parse or validate: the runtime does.

#![deny(missing_docs)]

pub mod anthropic;
pub mod app;
pub mod body_json;
pub mod chat;
pub mod clip;
pub mod conn;
pub mod error;
pub mod guard;
pub mod handler;
pub mod mcp;
pub mod metrics;
pub mod params;
pub mod responses;
pub mod routes;
pub mod run;
pub mod sse;
pub mod write_deadline;

pub use app::{App, Served, ServerConfig};
pub use handler::MAX_JSON_DEPTH;
pub use routes::{OPENAPI, router};

use std::sync::Arc;
use toolgram_runtime::{ModelSet, ToolSources};

/// Serve `models` until SIGTERM or Ctrl-C; then new connections are refused and requests
/// in flight get the drain timeout to finish. Models not loaded yet load on first use;
/// requests may use the tools of the MCP servers in `mcp` (started by the caller: declared at
/// start, never by a request).
pub async fn serve(
    models: ModelSet,
    config: ServerConfig,
    mcp: Option<ToolSources>,
) -> std::io::Result<()> {
    let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
    config.check().map_err(|e| invalid(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind((config.host.as_str(), config.port)).await?;
    let addr = listener.local_addr()?;
    let mut app = App::new(models, config);
    app.mcp = mcp;
    let app = Arc::new(app);
    if !app.config.loopback_bind() && app.config.api_key.is_none() {
        eprintln!(
            "toolgram serve: WARNING: listening on {addr}, not a loopback address, without an API key: anyone who can reach it can use the model (set --api-key or TOOLGRAM_API_KEY)"
        );
    }
    let ids: Vec<String> = app.models.models().map(|m| format!("`{}`", m.id)).collect();
    let (label, more) = match ids.len() {
        1 => ("model", String::new()),
        _ => (
            "models",
            ", the first by default; others load on first use".to_owned(),
        ),
    };
    eprintln!(
        "toolgram serve: {label} {}{more} on http://{addr}/v1 (Ctrl-C or SIGTERM to stop)",
        ids.join(", ")
    );
    let drain = app.config.drain_timeout;
    conn::serve_on(listener, app, shutdown_signal(drain)).await?;
    eprintln!("toolgram serve: stopped");
    Ok(())
}

/// [`serve`] on a new multi-threaded tokio runtime (for callers without one). Runs still
/// winding down after the drain (cancelled, they stop within a decode step) are not waited
/// for past a second.
pub fn serve_blocking(
    models: ModelSet,
    config: ServerConfig,
    mcp: Option<ToolSources>,
) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // A request's grammar is compiled on these threads (its check, in `spawn_blocking`), and
        // llguidance's compiler recurses once per rule reference: a chain at the reader's limit
        // (`lark::MAX_REF_DEPTH`) takes three quarters of tokio's default 2 MiB.
        .thread_stack_size(toolgram_runtime::COMPILE_STACK_BYTES)
        .build()?;
    let served = rt.block_on(serve(models, config, mcp));
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    served
}

async fn shutdown_signal(drain: std::time::Duration) {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    eprintln!(
        "toolgram serve: shutting down; finishing requests in flight (at most {} s)",
        drain.as_secs_f64()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use toolgram_core::define::{custom_tool, read_tools};
    use toolgram_grammar::lark;

    /// `/openapi.json` lists every fixed limit with the value the code enforces.
    #[test]
    fn the_openapi_document_lists_the_limits_the_code_enforces() {
        let doc: Value = serde_json::from_str(OPENAPI).expect("the document is JSON");
        let listed = doc["info"]["x-toolgram-limits"]
            .as_array()
            .expect("x-toolgram-limits");
        let enforced = [
            ("params::MAX_TOOLS", params::MAX_TOOLS),
            ("params::MAX_TOOL_BYTES", params::MAX_TOOL_BYTES),
            (
                "custom_tool::MAX_DEFINITION_BYTES",
                custom_tool::MAX_DEFINITION_BYTES,
            ),
            ("lark::MAX_NESTING", lark::MAX_NESTING),
            ("lark::MAX_RULES", lark::MAX_RULES),
            ("lark::MAX_REF_DEPTH", lark::MAX_REF_DEPTH),
            ("read_tools::MAX_ESCAPE_WORDS", read_tools::MAX_ESCAPE_WORDS),
            (
                "read_tools::MAX_ESCAPE_WORD_BYTES",
                read_tools::MAX_ESCAPE_WORD_BYTES,
            ),
            ("params::MAX_LOGIT_BIAS", params::MAX_LOGIT_BIAS),
            ("params::MAX_STOP", params::MAX_STOP),
            ("params::MAX_STOP_BYTES", params::MAX_STOP_BYTES),
            ("MAX_JSON_DEPTH", MAX_JSON_DEPTH),
            ("params::MAX_ATTEMPTS", params::MAX_ATTEMPTS as usize),
        ];
        for (name, value) in enforced {
            let row = listed
                .iter()
                .find(|r| r["fixed"] == name)
                .unwrap_or_else(|| panic!("{name} is not in x-toolgram-limits"));
            assert_eq!(row["value"], value, "{name}");
        }
        let fixed = listed.iter().filter(|r| r.get("fixed").is_some()).count();
        assert_eq!(
            fixed,
            enforced.len(),
            "a fixed limit listed but not checked here"
        );
    }
}
