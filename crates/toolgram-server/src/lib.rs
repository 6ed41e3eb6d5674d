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
//! - [`params`] — request fields read one by one into typed 400s;
//! - [`clip`] — client text cut short where the server repeats it (notes, errors, logs);
//! - [`error`] — OpenAI-shaped errors and their statuses;
//! - [`run`] — the runtime's blocking calls from async handlers, with cancellation;
//! - [`sse`] — Server-Sent Events bodies from channels;
//! - [`metrics`] — `GET /metrics`;
//! - [`guard`] — what a request must show before it is read (loopback `Host`/`Origin`, the
//!   key in constant time, a JSON content type);
//! - [`conn`] — accepting connections: the connection cap, header and idle timeouts, the
//!   bounded drain.
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
pub mod chat;
pub mod clip;
pub mod conn;
pub mod error;
pub mod guard;
pub mod metrics;
pub mod params;
pub mod responses;
pub mod run;
pub mod sse;

pub use app::{App, Served, ServerConfig};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use error::ApiError;
use serde_json::{Value, json};
use std::sync::Arc;
use toolgram_runtime::ModelSet;

/// How deep a request body may nest arrays and objects (serde_json's recursion limit).
pub const MAX_JSON_DEPTH: usize = 128;

/// The OpenAPI 3.1 document of this server.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// The routes over `app`.
pub fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/responses", post(create_response))
        .route("/v1/responses/{id}", get(get_response))
        .route("/v1/messages", post(anthropic::messages))
        .route("/v1/messages/count_tokens", post(anthropic::count_tokens))
        .route("/v1/models", get(models))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .route_layer(middleware::from_fn_with_state(Arc::clone(&app), authorize));
    Router::new()
        .route("/health", get(health))
        .merge(api)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&app),
            loopback_only,
        ))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), count))
        .with_state(app)
}

/// Serve `models` until SIGTERM or Ctrl-C; then new connections are refused and requests
/// in flight get the drain timeout to finish. Models not loaded yet load on first use.
pub async fn serve(models: ModelSet, config: ServerConfig) -> std::io::Result<()> {
    let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
    config.check().map_err(|e| invalid(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind((config.host.as_str(), config.port)).await?;
    let addr = listener.local_addr()?;
    let app = Arc::new(App::new(models, config));
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
pub fn serve_blocking(models: ModelSet, config: ServerConfig) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // A request's grammar is compiled on these threads (its check, in `spawn_blocking`), and
        // llguidance's compiler recurses once per rule reference: a chain at the reader's limit
        // (`lark::MAX_REF_DEPTH`) takes three quarters of tokio's default 2 MiB.
        .thread_stack_size(toolgram_runtime::COMPILE_STACK_BYTES)
        .build()?;
    let served = rt.block_on(serve(models, config));
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

/// Whether a request is for Anthropic's routes (its errors take Anthropic's shape).
fn is_anthropic(path: &str) -> bool {
    path.starts_with("/v1/messages")
}

/// `err` in the shape of the API `path` belongs to.
fn shaped(path: &str, err: ApiError) -> Response {
    if is_anthropic(path) {
        anthropic::AnthropicError(err).into_response()
    } else {
        err.into_response()
    }
}

/// The key a client sent: `Authorization: Bearer KEY` (the scheme in any case, RFC 7235) or
/// Anthropic's `x-api-key: KEY`.
fn sent_key(headers: &axum::http::HeaderMap) -> Option<&str> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, key)| key.trim());
    bearer.or_else(|| headers.get("x-api-key").and_then(|v| v.to_str().ok()))
}

async fn authorize(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let Some(key) = &app.config.api_key else {
        return next.run(req).await;
    };
    if guard::key_matches(sent_key(req.headers()), key) {
        return next.run(req).await;
    }
    let err = ApiError::new(
        StatusCode::UNAUTHORIZED,
        "invalid_request_error",
        "invalid_api_key",
        "missing or wrong API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`",
    );
    let mut resp = shaped(req.uri().path(), err);
    resp.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        axum::http::HeaderValue::from_static("Bearer realm=\"toolgram\""),
    );
    resp
}

/// On a loopback bind, requests whose `Host` or `Origin` name another host are refused.
async fn loopback_only(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let checked = if app.config.loopback_bind() {
        guard::loopback_origin(req.headers())
    } else {
        Ok(())
    };
    match checked {
        Ok(()) => next.run(req).await,
        Err(e) => shaped(req.uri().path(), e),
    }
}

/// Counts a request once, when its handler ends; a handler dropped first (its client hung
/// up, cancelling the run) counts as [`metrics::CLIENT_CLOSED`] and a disconnect.
struct Counted {
    app: Arc<App>,
    route: String,
    status: Option<u16>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        let status = self.status.unwrap_or_else(|| {
            self.app.metrics.disconnect();
            metrics::CLIENT_CLOSED
        });
        self.app.metrics.request(&self.route, status);
    }
}

async fn count(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let mut counted = Counted {
        app,
        route,
        status: None,
    };
    let resp = next.run(req).await;
    counted.status = Some(resp.status().as_u16());
    resp
}

/// The body as JSON: sent as `application/json` (415), within the size limit (413) and the
/// body read timeout (408).
pub(crate) async fn json_body(app: &App, req: Request) -> Result<Value, ApiError> {
    guard::json_content_type(req.headers())?;
    let limit = app.config.body_read_timeout;
    let read = axum::body::to_bytes(req.into_body(), app.config.max_body_bytes);
    let bytes = tokio::time::timeout(limit, read)
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "invalid_request_error",
                "body_timeout",
                format!(
                    "the body did not arrive within {} s (--body-read-timeout-s)",
                    limit.as_secs_f64()
                ),
            )
        })?
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invalid_request_error",
                "request_too_large",
                format!(
                    "the body is larger than {} bytes",
                    app.config.max_body_bytes
                ),
            )
        })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        let message = if e.to_string().contains("recursion limit") {
            // serde_json's fixed limit, far above real tools (a schema level is two JSON levels).
            format!(
                "the body nests arrays and objects deeper than {MAX_JSON_DEPTH} levels (about {} levels of schema nesting in a tool)",
                MAX_JSON_DEPTH / 2 - 2
            )
        } else {
            format!("the body is not valid JSON: {e}")
        };
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "invalid_json",
            message,
        )
    })
}

/// The model a request body's `model` picks ([`App::choose`]), loaded if it is not (on the
/// blocking pool, one load at a time; a request for a model that is loading waits for it,
/// within the request's timeout and its model's queue bound).
pub(crate) async fn served(app: &Arc<App>, body: &Value) -> Result<Served, ApiError> {
    let model = params::opt_str(params::object(body)?, "model")?;
    let index = app.choose(model)?;
    let timeout = app.config.timeout;
    let loader = Arc::clone(app);
    let load = tokio::task::spawn_blocking(move || loader.models.get(index));
    let runtime = tokio::time::timeout(timeout, load)
        .await
        .map_err(|_| {
            let id = app.models.models().nth(index).map_or("", |m| m.id.as_str());
            ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "timeout_error",
                "timeout",
                format!(
                    "loading the model `{id}` took longer than {} s (--timeout-s); it goes on loading",
                    timeout.as_secs()
                ),
            )
        })?
        .map_err(|e| ApiError::internal("loading the model", e))??;
    Ok(app.served(index, runtime))
}

/// Check a request before it is queued: the engine compiles its grammar (kept in the request
/// returned, so the run compiles nothing again); unknown schema keywords are refused here
/// under strict schemas, else logged once (the reply lists them). Blocking: call it inside
/// [`off_worker`].
pub(crate) fn precheck(
    app: &App,
    served: &Served,
    route: &'static str,
    mut req: toolgram_runtime::Request,
) -> Result<toolgram_runtime::Request, ApiError> {
    let checked = served.runtime.check(&mut req)?;
    app.log_once(route, "warnings", &checked.warnings);
    Ok(req)
}

/// Run `work` (reading a body into a request and checking it: a client's tools, grammars
/// and schemas) on the blocking pool, never on the async workers that answer `/health` and
/// accept connections: at most [`App::checks`] at once, within the request's timeout (504
/// past it; every reader's input is bounded, so the work itself ends within milliseconds).
pub(crate) async fn off_worker<T: Send + 'static>(
    app: &Arc<App>,
    work: impl FnOnce(&App) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let timeout = app.config.timeout;
    let worker = Arc::clone(app);
    let done = async move {
        let permit = Arc::clone(&worker.checks)
            .acquire_owned()
            .await
            .map_err(|e| ApiError::internal("the check queue", e))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work(&worker)
        })
        .await
        .map_err(|e| ApiError::internal("the request's check", e))?
    };
    tokio::time::timeout(timeout, done).await.map_err(|_| {
        ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "timeout_error",
            "timeout",
            format!(
                "reading and checking the request took longer than {} s (--timeout-s)",
                timeout.as_secs()
            ),
        )
    })?
}

async fn chat_completions(State(app): State<Arc<App>>, req: Request) -> Response {
    let result = async {
        let body = json_body(&app, req).await?;
        let served = served(&app, &body).await?;
        let chat = off_worker(&app, move |app| {
            let mut chat = chat::read(app, served, &body)?;
            chat.req = precheck(app, &chat.served, "/v1/chat/completions", chat.req)?;
            Ok(chat)
        })
        .await?;
        if chat.stream {
            chat::stream(Arc::clone(&app), chat).await
        } else {
            chat::reply(Arc::clone(&app), chat).await
        }
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}

async fn create_response(State(app): State<Arc<App>>, req: Request) -> Response {
    let result = async {
        let body = json_body(&app, req).await?;
        let served = served(&app, &body).await?;
        let r = off_worker(&app, move |app| {
            let mut r = responses::read(app, served, &body)?;
            r.req = precheck(app, &r.served, "/v1/responses", r.req)?;
            Ok(r)
        })
        .await?;
        if r.stream {
            responses::stream(Arc::clone(&app), r).await
        } else {
            responses::reply(Arc::clone(&app), r).await
        }
    }
    .await;
    // The conversation is `input` here, not Chat's `messages`.
    result.unwrap_or_else(|e| e.renamed_param("messages", "input").into_response())
}

async fn get_response(
    State(app): State<Arc<App>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    match app.stored(&id) {
        Some(s) => ([(header::CONTENT_TYPE, "application/json")], s.body).into_response(),
        None => ApiError::new(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "not_found",
            format!("no stored response `{id}`"),
        )
        .into_response(),
    }
}

async fn health(State(app): State<Arc<App>>) -> Json<Value> {
    let states = app.models.states();
    let loaded = |s: &toolgram_runtime::ModelState| s.runtime.clone();
    // A lane that failed released its slot and serves again; `degraded` says a bug was hit.
    let failed: usize = states
        .iter()
        .filter_map(loaded)
        .map(|r| r.lanes_failed())
        .sum();
    let queued: usize = states
        .iter()
        .map(|s| s.waiting + loaded(s).map_or(0, |r| r.queue_depth()))
        .sum();
    let status = if failed == 0 { "ok" } else { "degraded" };
    let models: Vec<Value> = states
        .iter()
        .map(|s| {
            let r = loaded(s);
            json!({"id": s.id, "loaded": r.is_some(), "loading_waiters": s.waiting,
                "queue_depth": r.as_ref().map_or(0, |r| r.queue_depth()),
                "lanes_failed": r.as_ref().map_or(0, |r| r.lanes_failed()),
                "loads": s.loads, "unloads": s.unloads,
                "last_load_seconds": s.last_load.map(|d| d.as_secs_f64()),
                "offload": r.as_ref().and_then(|r| r.offload().map(toolgram_runtime::Offload::to_json))})
        })
        .collect();
    let offload = models.first().map_or(Value::Null, |m| m["offload"].clone());
    Json(
        json!({"status": status, "model": app.model_id(), "queue_depth": queued,
        "lanes_failed": failed, "offload": offload, "models": models}),
    )
}

async fn models(State(app): State<Arc<App>>) -> Json<Value> {
    let entry = |id: &str| {
        json!({"id": id, "object": "model", "created": 0, "owned_by": "toolgram",
        "type": "model", "display_name": id, "created_at": "1970-01-01T00:00:00Z"})
    };
    let data: Vec<Value> = app
        .models
        .models()
        .flat_map(|m| std::iter::once(&m.id).chain(&m.aliases))
        .map(|id| entry(id))
        .collect();
    let last = data
        .last()
        .and_then(|d| d["id"].as_str())
        .map(str::to_owned);
    Json(json!({"object": "list", "data": data, "has_more": false,
        "first_id": app.model_id(), "last_id": last}))
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render(&app.models, app.stored_size()),
    )
        .into_response()
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn method_not_allowed(req: Request) -> Response {
    let err = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        "method_not_allowed",
        format!("{} is not allowed on {}", req.method(), req.uri().path()),
    );
    shaped(req.uri().path(), err)
}

async fn not_found(req: Request) -> Response {
    let err = ApiError::new(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        "unknown_url",
        format!("no route for {} {}", req.method(), req.uri().path()),
    );
    shaped(req.uri().path(), err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgram_core::define::{custom_tool, tool};
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
            ("tool::MAX_ESCAPE_WORDS", tool::MAX_ESCAPE_WORDS),
            ("tool::MAX_ESCAPE_WORD_BYTES", tool::MAX_ESCAPE_WORD_BYTES),
            ("params::MAX_LOGIT_BIAS", params::MAX_LOGIT_BIAS),
            ("params::MAX_STOP", params::MAX_STOP),
            ("params::MAX_STOP_BYTES", params::MAX_STOP_BYTES),
            ("MAX_JSON_DEPTH", MAX_JSON_DEPTH),
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
