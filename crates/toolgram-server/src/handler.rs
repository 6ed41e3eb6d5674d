//! The one shape of an API handler's first half: the body read as JSON within its limits,
//! the model it names chosen and loaded, the API's reader and the runtime's check run off the
//! async workers. Each API module (`chat`, `responses`, `anthropic`) calls [`read_checked`]
//! — its request comes back holding the runtime's [`Ready`] in place of the request it read —
//! and then replies in its own shapes.
//!
//! This module must not know any API's shapes: readers are passed in.

use crate::app::{App, Served};
use crate::error::ApiError;
use crate::{guard, params};
use axum::extract::Request;
use axum::http::StatusCode;
use serde_json::Value;
use std::sync::Arc;
use toolgram_runtime::Ready;

/// How deep a request body may nest arrays and objects (serde_json's recursion limit).
pub const MAX_JSON_DEPTH: usize = 128;

/// What an API's reader gives: the model that serves it and the runtime request, which the
/// check turns into a [`Ready`] (the API's own request type over it, [`Self::Checked`]).
pub(crate) trait ReadRequest: Sized + Send + 'static {
    /// The same request, its runtime request checked.
    type Checked;
    /// The request with its runtime request made [`Ready`] by `check` (given the model).
    fn checked(
        self,
        check: impl FnOnce(&Served, toolgram_runtime::Request) -> Result<Ready, ApiError>,
    ) -> Result<Self::Checked, ApiError>;
}

/// An API's reader: the body into its request, for the model chosen.
pub(crate) type Reader<R> = fn(&App, Served, &Value) -> Result<R, ApiError>;

/// Read `req` through `read` and check it (see [`precheck`]): the first half of every API's
/// handler.
pub(crate) async fn read_checked<R: ReadRequest>(
    app: &Arc<App>,
    req: Request,
    route: &'static str,
    read: Reader<R>,
) -> Result<R::Checked, ApiError>
where
    R::Checked: Send + 'static,
{
    let body = json_body(app, req).await?;
    let served = served(app, &body).await?;
    off_worker(app, move |app| {
        read(app, served, &body)?.checked(|served, req| precheck(app, served, route, req))
    })
    .await
}

/// Read `req` through `read` and hand the request to `then`, off the async workers, without
/// the check (`count_tokens`: nothing is decoded).
pub(crate) async fn read_then<R: 'static, T: Send + 'static>(
    app: &Arc<App>,
    req: Request,
    read: Reader<R>,
    then: impl FnOnce(R) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let body = json_body(app, req).await?;
    let served = served(app, &body).await?;
    off_worker(app, move |app| then(read(app, served, &body)?)).await
}

/// The body as JSON: sent as `application/json` (415), within the size limit (413) and the
/// body read timeout (408).
async fn json_body(app: &App, req: Request) -> Result<Value, ApiError> {
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
async fn served(app: &Arc<App>, body: &Value) -> Result<Served, ApiError> {
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

/// Check a request before it is queued: the pool offered for it and, on the engine, its
/// grammar compiled, carried to its run in the [`Ready`] (the run compiles nothing again);
/// unknown schema keywords are refused here under strict schemas, else logged once (the
/// reply lists them). Blocking: call it inside [`off_worker`].
fn precheck(
    app: &App,
    served: &Served,
    route: &'static str,
    req: toolgram_runtime::Request,
) -> Result<Ready, ApiError> {
    let ready = served.runtime.check(req)?;
    app.log_once(route, "warnings", &ready.checked().warnings);
    Ok(ready)
}

/// Run `work` (reading a body into a request and checking it: a client's tools, grammars
/// and schemas) on the blocking pool, never on the async workers that answer `/health` and
/// accept connections: at most [`App::checks`] at once, within the request's timeout (504
/// past it; every reader's input is bounded, so the work itself ends within milliseconds).
async fn off_worker<T: Send + 'static>(
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
