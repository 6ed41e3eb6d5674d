//! Anthropic's Messages API: `POST /v1/messages` (JSON or SSE; the `?beta=true` query that
//! Claude Code adds is accepted) and `POST /v1/messages/count_tokens`, on the same run stage
//! as the OpenAI routes — the same grammar, validation and retries. [`read`] maps the request
//! to the runtime, [`wire`] maps the reply back; the handlers here only connect the two.
//! This module must not compile, decode or validate.

pub mod read;
pub mod wire;

use crate::app::App;
use crate::error::ApiError;
use crate::handler;
use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::post;
use serde_json::json;
use std::sync::Arc;
use toolgram_runtime::Event;

/// The Messages route, as the metrics name it.
const ROUTE: &str = "/v1/messages";

/// An error answered in Anthropic's shape.
pub struct AnthropicError(pub ApiError);

impl From<ApiError> for AnthropicError {
    fn from(e: ApiError) -> Self {
        Self(e)
    }
}

impl IntoResponse for AnthropicError {
    fn into_response(self) -> HttpResponse {
        self.0.respond(wire::error(&self.0))
    }
}

/// This API's routes.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(ROUTE, post(messages))
        .route("/v1/messages/count_tokens", post(count_tokens))
}

/// `POST /v1/messages`.
async fn messages(State(app): State<Arc<App>>, req: Request) -> HttpResponse {
    let result = async {
        let m = handler::read_checked(&app, req, ROUTE, read::read).await?;
        if m.api.stream {
            stream(Arc::clone(&app), m).await
        } else {
            reply(Arc::clone(&app), m).await
        }
    }
    .await;
    result.unwrap_or_else(|e| AnthropicError(e).into_response())
}

/// `POST /v1/messages/count_tokens`: `{"input_tokens": N}`, the prompt as the model's template
/// renders it with the tools offered.
async fn count_tokens(State(app): State<Arc<App>>, req: Request) -> HttpResponse {
    let result = async {
        let n = handler::read_then(
            &app,
            req,
            "/v1/messages/count_tokens",
            read::read,
            |served, req| Ok(served.runtime.count_tokens(&req)?),
        )
        .await?;
        Ok::<_, ApiError>(axum::Json(json!({ "input_tokens": n })).into_response())
    }
    .await;
    result.unwrap_or_else(|e| AnthropicError(e).into_response())
}

/// A Messages request ready to run.
type Checked = handler::Checked<read::MessagesFields>;

async fn reply(app: Arc<App>, m: Checked) -> Result<HttpResponse, ApiError> {
    let id = app.new_id("msg");
    let ran = match &m.api.mcp {
        Some(u) => crate::mcp::run(&app, &m.served, m.req, Arc::clone(u)).await?,
        None => crate::run::run(&app, &m.served, m.req).await?,
    };
    match ran {
        Ok(r) => {
            app.metrics.reply(ROUTE, &m.served.id, &r, None);
            let toolgram = crate::app::toolgram_json(Some(&r), &m.notes);
            Ok(axum::Json(wire::message(&id, &m.served.id, &r, toolgram)).into_response())
        }
        Err(e) if e.kind() == "truncated" => {
            app.metrics.failed(&e);
            let toolgram = crate::app::cut_toolgram_json(&e, &m.notes);
            let body = wire::cut_message(&id, &m.served.id, e.usage(), toolgram);
            Ok(axum::Json(body).into_response())
        }
        Err(e) => {
            app.metrics.failed(&e);
            Err(e.into())
        }
    }
}

async fn stream(app: Arc<App>, m: Checked) -> Result<HttpResponse, ApiError> {
    let id = app.new_id("msg");
    let (mut writer, start) = wire::Frames::start(&id, &m.served.id, m.notes);
    let metrics = Arc::clone(&app);
    let model = m.served.id.clone();
    let events = match &m.api.mcp {
        Some(u) => crate::mcp::stream(&app, &m.served, m.req, Arc::clone(u))?,
        None => crate::run::stream(&app, &m.served, m.req)?,
    };
    let rx = crate::run::forward_events(&app, events, start, move |event, clock| {
        match &event {
            Event::Done(r) => {
                metrics
                    .metrics
                    .reply(ROUTE, &model, r, Some(clock.first_token()));
            }
            Event::Failed(e) => metrics.metrics.failed(e),
            _ => {}
        }
        writer.on(event)
    })
    .await?;
    Ok(crate::sse::named(rx))
}
