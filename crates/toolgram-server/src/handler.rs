//! The one shape of an API handler's first half, under one deadline for the whole request:
//! the body read as JSON within its limits, read by its API's reader and checked as far as
//! it can be without a model — all before any model is loaded, so a request that cannot be
//! served loads nothing —, then the model it names loaded and the request settled on it and
//! checked by the runtime, off the async workers. Each API module (`chat`, `responses`,
//! `anthropic`) calls [`read_checked`] and replies in its own shapes with the [`Checked`]
//! request it gets.
//!
//! This module must not know any API's shapes: readers are passed in.

use crate::app::{App, Served};
use crate::error::ApiError;
use crate::params::{ModelAsks, Notes};
use crate::{guard, params};
use axum::extract::Request;
use axum::http::StatusCode;
use serde_json::Value;
use std::sync::Arc;
use tokio::time::Instant;
use toolgram_runtime::Ready;

/// How deep a request body may nest arrays and objects (serde_json's recursion limit).
pub const MAX_JSON_DEPTH: usize = 128;

/// What an API's reader makes of a body, before any model is loaded: the runtime request,
/// what only the model can settle, what was not done as asked, and the API's own fields.
pub struct Read<A> {
    /// The runtime request.
    pub req: toolgram_runtime::Request,
    /// What the model settles once it is loaded.
    pub asks: ModelAsks,
    /// What was not done as asked.
    pub notes: Notes,
    /// The API's own fields (streaming, what its reply echoes).
    pub api: A,
}

/// A request ready to run: the model it runs on, the runtime's check of it, its notes and
/// the API's own fields.
pub struct Checked<A> {
    /// The model it runs on (with the request's deadline).
    pub served: Served,
    /// The runtime request, checked.
    pub req: Ready,
    /// What was not done as asked.
    pub notes: Notes,
    /// The API's own fields.
    pub api: A,
}

/// An API's reader: the body into its request.
pub type Reader<A> = fn(&App, &Value) -> Result<Read<A>, ApiError>;

/// Read `req` through `read`, load its model and check it (see [`precheck`]): the first half
/// of every API's handler, within the request's one deadline.
pub(crate) async fn read_checked<A: Send + 'static>(
    app: &Arc<App>,
    req: Request,
    route: &'static str,
    read: Reader<A>,
) -> Result<Checked<A>, ApiError> {
    let arrival = Instant::now();
    let deadline = arrival + app.config.timeout.on(None);
    let (index, r) = read_unloaded(app, req, read, deadline).await?;
    let served = served(app, index, arrival, deadline).await?;
    off_worker(app, served.deadline, move |app| {
        let Read {
            mut req,
            asks,
            mut notes,
            api,
        } = r;
        asks.apply(&served, &mut req, &mut notes);
        app.log_notes(route, &notes);
        let req = precheck(app, &served, route, req)?;
        Ok(Checked {
            served,
            req,
            notes,
            api,
        })
    })
    .await
}

/// Read `req` through `read`, load its model and hand both to `then` on the blocking pool,
/// without the check and without holding a check permit (`count_tokens`: nothing is decoded,
/// but the count waits its turn with the engine's queue).
pub(crate) async fn read_then<A: Send + 'static, T: Send + 'static>(
    app: &Arc<App>,
    req: Request,
    route: &'static str,
    read: Reader<A>,
    then: impl FnOnce(&Served, toolgram_runtime::Request) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let arrival = Instant::now();
    let deadline = arrival + app.config.timeout.on(None);
    let (index, r) = read_unloaded(app, req, read, deadline).await?;
    let served = served(app, index, arrival, deadline).await?;
    let deadline = served.deadline;
    let Read {
        mut req,
        asks,
        mut notes,
        ..
    } = r;
    asks.apply(&served, &mut req, &mut notes);
    app.log_notes(route, &notes);
    let work = tokio::task::spawn_blocking(move || then(&served, req));
    match tokio::time::timeout_at(deadline, work).await {
        Ok(done) => done.map_err(|e| ApiError::internal("the request", e))?,
        Err(_) => Err(past_deadline(app, "the request")),
    }
}

/// The body, the model it names (not loaded) and the API's reading of it, checked as far as
/// it can be without the model.
async fn read_unloaded<A: Send + 'static>(
    app: &Arc<App>,
    req: Request,
    read: Reader<A>,
    deadline: Instant,
) -> Result<(usize, Read<A>), ApiError> {
    let body = json_body(app, req).await?;
    let index = app.choose(params::opt_str(params::object(&body)?, "model")?)?;
    let r = off_worker(app, deadline, move |app| {
        let r = read(app, &body)?;
        if app.models.is_embedded(index) {
            toolgram_runtime::check_offer(&r.req)?;
        }
        Ok(r)
    })
    .await?;
    Ok((index, r))
}

/// A 504 for `what` past the request's deadline (`--timeout-s`, for the whole request).
fn past_deadline(app: &App, what: &str) -> ApiError {
    ApiError::new(
        StatusCode::GATEWAY_TIMEOUT,
        "timeout_error",
        "timeout",
        format!(
            "{what} took longer than {} s (--timeout-s, for the whole request)",
            app.config.timeout.on(None).as_secs()
        ),
    )
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
    crate::body_json::parse(&bytes).map_err(|e| {
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

/// The model at `index` ([`App::choose`]), loaded if it is not (on the blocking pool, one
/// load at a time in arrival order; a request for a model that is loading waits for it),
/// within the request's deadline: past it the request gets a 504 and leaves the loading
/// queue.
async fn served(
    app: &Arc<App>,
    index: usize,
    arrival: Instant,
    deadline: Instant,
) -> Result<Served, ApiError> {
    let loader = Arc::clone(app);
    let until = deadline.into_std();
    let load = tokio::task::spawn_blocking(move || loader.models.get_within(index, until));
    let runtime = tokio::time::timeout_at(deadline, load)
        .await
        .map_err(|_| {
            let id = app.models.models().nth(index).map_or("", |m| m.id.as_str());
            past_deadline(app, &format!("loading the model `{id}`"))
        })?
        .map_err(|e| ApiError::internal("loading the model", e))??;
    Ok(app.served(index, runtime, arrival))
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
    let ready = served.runtime.ready(req)?;
    app.log_once(route, "warnings", &ready.checked().warnings);
    Ok(ready)
}

/// Run `work` (reading a body into a request and checking it: a client's tools, grammars
/// and schemas) on the blocking pool, never on the async workers that answer `/health` and
/// accept connections: at most [`App::checks`] at once, within the request's deadline (504
/// past it; every reader's input is bounded, so the work itself ends within milliseconds).
/// `work` must not wait for the engine: it holds a permit every model's requests share.
async fn off_worker<T: Send + 'static>(
    app: &Arc<App>,
    deadline: Instant,
    work: impl FnOnce(&App) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
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
    tokio::time::timeout_at(deadline, done)
        .await
        .map_err(|_| past_deadline(app, "reading and checking the request"))?
}
