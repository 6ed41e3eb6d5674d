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
use toolgram_runtime::{Call, CallKind, Event, Response};
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

/// Store the reply `r` (its body as answered) after the conversation `kept`: what a tool
/// loop added to it, then the reply, its calls waiting for approval among its calls.
fn remember(app: &App, kept: Option<Vec<ChatMessage>>, id: &str, r: &Response, body: &Value) {
    let Some(mut messages) = kept else { return };
    messages.extend(r.loop_messages.iter().cloned());
    let calls: Vec<&Call> = r
        .tool_calls
        .iter()
        .chain(r.pending.iter().map(|p| &p.call))
        .collect();
    messages.push(ChatMessage {
        role: "assistant".into(),
        content: r.content.clone(),
        tool_calls: (!calls.is_empty()).then(|| {
            calls
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

/// The `mcp_approval_request` items of the calls a loop did not run: approving one runs it
/// and goes on (also for calls held back at `--max-steps`).
fn approvals(r: &Response) -> Vec<Value> {
    r.pending
        .iter()
        .map(|p| wire::approval_request(&p.call, &p.server))
        .collect()
}

/// Answer a non-streamed request.
async fn reply(app: Arc<App>, rr: Checked) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &rr);
    let kept = to_keep(&rr);
    let asked = &rr.api.asked;
    let ran = match &rr.api.mcp {
        Some(m) => crate::mcp::run(&app, &rr.served, rr.req, Arc::clone(m)).await?,
        None => crate::run::run(&app, &rr.served, rr.req).await?,
    };
    match ran {
        Ok(r) => {
            app.metrics.reply(ROUTE, &env.model, &r, None);
            let new_id = &mut |p: &str| app.new_id(p);
            let mut output = match &rr.api.mcp {
                Some(m) => wire::mcp_lists(m, new_id),
                None => Vec::new(),
            };
            output.extend(r.steps.iter().map(|s| wire::mcp_call(s, new_id)));
            output.extend(reply::output_items(asked, &r.reply(), new_id));
            output.extend(approvals(&r));
            let toolgram = crate::app::toolgram_json(Some(&r), &rr.notes);
            let body = reply::finished(&env, asked, output, &r.reply(), toolgram);
            remember(&app, kept, &env.id, &r, &body);
            Ok(axum::Json(body).into_response())
        }
        Err(e) if e.kind() == "truncated" => {
            app.metrics.failed(&e);
            let toolgram = crate::app::cut_toolgram_json(&e, &rr.notes);
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
        api: ResponsesFields { asked, mcp, .. },
    } = rr;
    let toolgram = crate::app::toolgram_json(None, &notes);
    let created = reply::response_object(&env, &asked, "in_progress", vec![], None, toolgram);
    let (mut writer, mut start) = ResponseStream::start(&created, asked.clone());
    let events = match &mcp {
        Some(m) => {
            for item in wire::mcp_lists(m, &mut |p| app.new_id(p)) {
                start.extend(writer.list_tools(item));
            }
            crate::mcp::stream(&app, &served, req, Arc::clone(m))?
        }
        None => crate::run::stream(&app, &served, req)?,
    };
    let app2 = Arc::clone(&app);
    let mut kept = Some(kept);
    let rx = crate::run::forward_events(&app, events, start, move |event, clock| match event {
        Event::Done(r) => {
            let mut frames = Vec::new();
            for item in approvals(&r) {
                frames.extend(writer.plain_item(item));
            }
            let (items, mut closing) = writer.close();
            frames.append(&mut closing);
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
            let toolgram = crate::app::cut_toolgram_json(&e, &notes);
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
