//! OpenAI's Responses API: `POST /v1/responses` (JSON or SSE with the Responses event types),
//! on the run stage, with responses kept in memory (bounded; `store: false` honoured) for
//! `previous_response_id`. [`read`] maps the request to the runtime, [`wire`] maps the reply
//! back; the handlers here only connect the two and store what was answered. This module
//! must not compile, decode or validate.

pub mod read;
pub mod wire;

pub use read::{Checked, ResponsesFields, ResponsesRequest, read};

use crate::app::{App, Stored};
use crate::error::ApiError;
use crate::handler;
use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::sync::Arc;
use toolgram_core::ChatMessage;
use toolgram_runtime::{CallKind, Event, Response};
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
        if r.api.stream {
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

fn envelope(app: &App, rr: &Checked) -> Envelope {
    Envelope {
        id: app.new_id("resp"),
        created_at: app.now(),
        model: rr.served.id.clone(),
    }
}

/// The conversation a reply ends, kept for `previous_response_id` when the request asked
/// for it to be stored (`None` when it did not).
fn to_keep(rr: &Checked) -> Option<Vec<ChatMessage>> {
    rr.api
        .asked
        .store
        .then(|| rr.req.request().messages.clone())
}

/// Store the reply `r` (its body as answered) after the conversation `kept`.
fn remember(app: &App, kept: Option<Vec<ChatMessage>>, id: &str, r: &Response, body: &Value) {
    let Some(mut messages) = kept else { return };
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
async fn reply(app: Arc<App>, rr: Checked) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &rr);
    let kept = to_keep(&rr);
    let asked = &rr.api.asked;
    match crate::run::run(&app, &rr.served, rr.req).await? {
        Ok(r) => {
            app.metrics.reply(ROUTE, &env.model, &r, None);
            let output = reply::output_items(asked, &r.reply(), &mut |p| app.new_id(p));
            let toolgram = crate::app::toolgram_json(Some(&r), &rr.notes);
            let body = reply::finished(&env, asked, output, &r.reply(), toolgram);
            remember(&app, kept, &env.id, &r, &body);
            Ok(axum::Json(body).into_response())
        }
        Err(e) if e.kind() == "truncated" => {
            app.metrics.failed(&e);
            let toolgram = crate::app::toolgram_json(None, &rr.notes);
            let body = reply::cut(&env, asked, Vec::new(), e.usage(), toolgram);
            Ok(axum::Json(body).into_response())
        }
        Err(e) => {
            app.metrics.failed(&e);
            Err(e.into())
        }
    }
}

/// Answer a streamed request with the Responses event types. The frames' closure owns only
/// what it writes (not the model's runtime: a client that stops reading must not keep its
/// model from being unloaded).
async fn stream(app: Arc<App>, rr: Checked) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &rr);
    let kept = to_keep(&rr);
    let Checked {
        served,
        req,
        notes,
        api: ResponsesFields { asked, .. },
    } = rr;
    let toolgram = crate::app::toolgram_json(None, &notes);
    let created = reply::response_object(&env, &asked, "in_progress", vec![], None, toolgram);
    let (mut writer, start) = ResponseStream::start(&created, asked.clone());
    let app2 = Arc::clone(&app);
    let mut kept = Some(kept);
    let rx = crate::run::forward(&app, &served, req, start, move |event, clock| match event {
        Event::Done(r) => {
            let (items, mut frames) = writer.close();
            app2.metrics
                .reply(ROUTE, &env.model, &r, Some(clock.first_token()));
            let toolgram = crate::app::toolgram_json(Some(&r), &notes);
            let body = reply::finished(&env, &asked, items, &r.reply(), toolgram);
            remember(&app2, kept.take().flatten(), &env.id, &r, &body);
            frames.push(writer.finish(body));
            frames
        }
        Event::Failed(e) if e.kind() == "truncated" => {
            let (items, mut frames) = writer.close();
            app2.metrics.failed(&e);
            let toolgram = crate::app::toolgram_json(None, &notes);
            let body = reply::cut(&env, &asked, items, e.usage(), toolgram);
            frames.push(writer.finish(body));
            frames
        }
        Event::Failed(e) => {
            app2.metrics.failed(&e);
            let err = ApiError::from(e).body();
            vec![writer.error(err["error"].clone())]
        }
        other => wire::event_frames(&mut writer, &other, &mut |p| app2.new_id(p)),
    })
    .await?;
    Ok(crate::sse::named(rx))
}
