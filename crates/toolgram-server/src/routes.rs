//! The server's routes: each API's own (`chat`, `responses`, `anthropic`), the server's
//! (`/v1/models`, `/health`, `/metrics`, `/openapi.json`), and the layers over them — the API
//! key, the loopback `Host`/`Origin` guard, the request count — with errors in the shape of the
//! API a path belongs to.
//!
//! This module must not read a request body: the APIs' handlers do.

use crate::app::{App, Timeout};
use crate::error::ApiError;
use crate::{anthropic, chat, guard, metrics, responses};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::Arc;

/// The OpenAPI 3.1 document of this server.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// The routes over `app`.
pub fn router(app: Arc<App>) -> Router {
    let api = Router::new()
        .merge(chat::routes())
        .merge(responses::routes())
        .merge(anthropic::routes())
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

/// `GET /health`: answered without a key (load balancers probe it), but then with its
/// status alone; the models, their loads, where their layers are, their measured speed and
/// the time a request on each gets only with the key.
async fn health(State(app): State<Arc<App>>, headers: axum::http::HeaderMap) -> Json<Value> {
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
    // A model whose RPC worker is lost answers every request with 503 until it is reloaded.
    let lost_worker = states
        .iter()
        .filter_map(loaded)
        .any(|r| r.offload().is_some_and(|o| o.workers.check().is_err()));
    let status = if failed == 0 && !lost_worker {
        "ok"
    } else {
        "degraded"
    };
    let keyed = app
        .config
        .api_key
        .as_ref()
        .is_none_or(|key| guard::key_matches(sent_key(&headers), key));
    if !keyed {
        return Json(json!({"status": status}));
    }
    let models: Vec<Value> = states
        .iter()
        .map(|s| {
            let r = loaded(s);
            json!({"id": s.id, "loaded": r.is_some(), "loading_waiters": s.waiting,
                "queue_depth": r.as_ref().map_or(0, |r| r.queue_depth()),
                "lanes_failed": r.as_ref().map_or(0, |r| r.lanes_failed()),
                "loads": s.loads, "unloads": s.unloads,
                "last_load_seconds": s.last_load.map(|d| d.as_secs_f64()),
                "context_tokens": r.as_ref().and_then(toolgram_runtime::Runtime::context_size),
                "timeout_s": app.config.timeout.on(r.as_ref()).as_secs(),
                "speed": r.as_ref().and_then(toolgram_runtime::Runtime::speed).map(|s| json!({
                    "prefill_tokens_per_s": s.prefill_per_s.round(),
                    "decode_tokens_per_s": (s.decode_per_s * 10.0).round() / 10.0})),
                "offload": r.as_ref().and_then(|r| r.offload().map(toolgram_runtime::Offload::to_json))})
        })
        .collect();
    let offload = models.first().map_or(Value::Null, |m| m["offload"].clone());
    Json(
        json!({"status": status, "model": app.model_id(), "queue_depth": queued,
        "timeout": match app.config.timeout {
            Timeout::Sized => "sized to each model's measured speed (--timeout-s to fix it)",
            Timeout::Fixed(_) => "fixed (--timeout-s)",
        },
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
