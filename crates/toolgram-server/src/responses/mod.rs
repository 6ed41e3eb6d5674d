//! OpenAI's Responses API: `POST /v1/responses` (JSON or SSE with the Responses event types),
//! on the run stage, with responses kept in memory (bounded; `store: false` honoured) for
//! `previous_response_id`. [`read`] maps the request to the runtime, [`wire`] maps the reply
//! back; the handlers here only connect the two and store what was answered. This module
//! must not compile, decode or validate.

pub mod read;
pub mod wire;

pub use read::{Checked, ResponsesRequest, read};

use crate::app::{App, Served, Stored};
use crate::error::ApiError;
use crate::handler::{self, ReadRequest};
use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use serde_json::json;
use std::sync::Arc;
use toolgram_core::ChatMessage;
use toolgram_runtime::{CallKind, Event, Ready, Response};
use toolgram_wire::responses::input;
use toolgram_wire::responses::reply::{self, Envelope};
use toolgram_wire::responses::stream::ResponseStream;

/// This route, as the metrics name it.
const ROUTE: &str = "/v1/responses";

/// This API's routes.
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(ROUTE, post(create))
        .route("/v1/responses/{id}", get(stored))
}

/// `POST /v1/responses`.
async fn create(State(app): State<Arc<App>>, req: Request) -> HttpResponse {
    let result = async {
        let r = handler::read_checked(&app, req, ROUTE, read).await?;
        if r.stream {
            stream(Arc::clone(&app), r).await
        } else {
            reply(Arc::clone(&app), r).await
        }
    }
    .await;
    // The conversation is `input` here, not Chat's `messages`.
    result.unwrap_or_else(|e| e.renamed_param("messages", "input").into_response())
}

/// `GET /v1/responses/{id}`: a stored response.
async fn stored(State(app): State<Arc<App>>, Path(id): Path<String>) -> HttpResponse {
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

impl ReadRequest for ResponsesRequest {
    type Checked = Checked;

    fn checked(
        self,
        check: impl FnOnce(&Served, toolgram_runtime::Request) -> Result<Ready, ApiError>,
    ) -> Result<Checked, ApiError> {
        Ok(ResponsesRequest {
            req: check(&self.served, self.req)?,
            served: self.served,
            stream: self.stream,
            asked: self.asked,
            notes: self.notes,
        })
    }
}

fn envelope(app: &App, rr: &Checked) -> Envelope {
    Envelope {
        id: app.new_id("resp"),
        created_at: app.now(),
        model: rr.served.id.clone(),
    }
}

fn remember(app: &App, rr: &Checked, id: &str, r: &Response, body: &serde_json::Value) {
    if !rr.asked.store {
        return;
    }
    let mut messages = rr.req.request().messages.clone();
    messages.push(ChatMessage {
        role: "assistant".into(),
        content: r.content.clone(),
        tool_calls: (!r.tool_calls.is_empty()).then(|| {
            r.tool_calls
                .iter()
                .map(|c| {
                    let args = match &c.kind {
                        CallKind::Function { arguments } => arguments.to_string(),
                        CallKind::Custom { input } => json!({ "input": input }).to_string(),
                    };
                    input::call_message(&c.id, &c.name, args)
                })
                .collect()
        }),
        tool_call_id: None,
        name: None,
        reasoning_content: None,
    });
    app.store(Stored {
        id: id.to_owned(),
        messages,
        body: body.to_string(),
    });
}

/// Answer a non-streamed request.
pub async fn reply(app: Arc<App>, rr: Checked) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &rr);
    match crate::run::run(&app, &rr.served.runtime, rr.req.clone()).await? {
        Ok(r) => {
            app.metrics.reply(ROUTE, &env.model, &r, None);
            let output = reply::output_items(&rr.asked, &r.reply(), &mut |p| app.new_id(p));
            let toolgram = crate::app::toolgram_json(Some(&r), &rr.notes);
            let body = reply::finished(&env, &rr.asked, output, &r.reply(), toolgram);
            remember(&app, &rr, &env.id, &r, &body);
            Ok(axum::Json(body).into_response())
        }
        Err(e) if e.kind() == "truncated" => {
            app.metrics.failed(&e);
            let toolgram = crate::app::toolgram_json(None, &rr.notes);
            let body = reply::cut(&env, &rr.asked, Vec::new(), e.usage(), toolgram);
            Ok(axum::Json(body).into_response())
        }
        Err(e) => {
            app.metrics.failed(&e);
            Err(e.into())
        }
    }
}

/// Answer a streamed request with the Responses event types.
pub async fn stream(app: Arc<App>, rr: Checked) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &rr);
    let toolgram = crate::app::toolgram_json(None, &rr.notes);
    let created = reply::response_object(&env, &rr.asked, "in_progress", vec![], None, toolgram);
    let (mut writer, start) = ResponseStream::start(&created, rr.asked.clone());
    let (req, runtime) = (rr.req.clone(), rr.served.runtime.clone());
    let app2 = Arc::clone(&app);
    let rx = crate::run::forward(
        &app,
        &runtime,
        req,
        start,
        move |event, clock| match event {
            Event::Done(r) => {
                let (items, mut frames) = writer.close();
                app2.metrics
                    .reply(ROUTE, &env.model, &r, Some(clock.first_token()));
                let toolgram = crate::app::toolgram_json(Some(&r), &rr.notes);
                let body = reply::finished(&env, &rr.asked, items, &r.reply(), toolgram);
                remember(&app2, &rr, &env.id, &r, &body);
                frames.push(writer.finish(body));
                frames
            }
            Event::Failed(e) if e.kind() == "truncated" => {
                let (items, mut frames) = writer.close();
                app2.metrics.failed(&e);
                let toolgram = crate::app::toolgram_json(None, &rr.notes);
                let body = reply::cut(&env, &rr.asked, items, e.usage(), toolgram);
                frames.push(writer.finish(body));
                frames
            }
            Event::Failed(e) => {
                app2.metrics.failed(&e);
                let err = ApiError::from(e).body();
                vec![writer.error(err["error"].clone())]
            }
            other => wire::event_frames(&mut writer, &other, &mut |p| app2.new_id(p)),
        },
    )
    .await?;
    Ok(crate::sse::named(rx))
}
