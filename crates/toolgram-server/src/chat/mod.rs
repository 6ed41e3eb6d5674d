//! OpenAI's Chat Completions API: `POST /v1/chat/completions` (JSON or SSE, `[DONE]` last),
//! on the run stage. [`read`] maps the request to the runtime, [`wire`] maps the reply back;
//! the handlers here only connect the two. This module must not compile, decode or validate.

pub mod read;
pub mod wire;

pub use read::{ChatRequest, read};

use crate::app::App;
use crate::error::ApiError;
use axum::response::{IntoResponse, Response as HttpResponse};
use std::sync::Arc;
use toolgram_runtime::Event;
use wire::Envelope;

/// This route, as the metrics name it.
const ROUTE: &str = "/v1/chat/completions";

fn envelope(app: &App, chat: &ChatRequest) -> Envelope {
    Envelope {
        id: app.new_id("chatcmpl"),
        created: app.now(),
        model: chat.served.id.clone(),
    }
}

/// Answer a non-streamed request.
pub async fn reply(app: Arc<App>, chat: ChatRequest) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &chat);
    match crate::run::run(&app, &chat.served.runtime, chat.req).await? {
        Ok(r) => {
            app.metrics.reply(ROUTE, &env.model, &r, None);
            let toolgram = crate::app::toolgram_json(Some(&r), &chat.notes);
            Ok(axum::Json(wire::completion(&env, &r, toolgram)).into_response())
        }
        Err(e) if e.kind() == "truncated" => {
            app.metrics.failed(&e);
            Ok(axum::Json(wire::truncated(&env, &e)).into_response())
        }
        Err(e) => {
            app.metrics.failed(&e);
            Err(e.into())
        }
    }
}

/// Answer a streamed request: Server-Sent Events as the reply is decoded.
pub async fn stream(app: Arc<App>, chat: ChatRequest) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &chat);
    let start = vec![wire::role_chunk(&env)];
    let (include_usage, notes) = (chat.include_usage, chat.notes);
    let metrics = Arc::clone(&app);
    let rx = crate::run::forward(
        &app,
        &chat.served.runtime,
        chat.req,
        start,
        move |event, clock| match event {
            Event::Done(r) => {
                metrics
                    .metrics
                    .reply(ROUTE, &env.model, &r, Some(clock.first_token()));
                let toolgram = crate::app::toolgram_json(Some(&r), &notes);
                let finish = r.finish_reason.as_str();
                wire::finish_chunks(&env, finish, Some(toolgram), r.usage, include_usage)
            }
            Event::Failed(e) if e.kind() == "truncated" => {
                metrics.metrics.failed(&e);
                wire::finish_chunks(&env, "length", None, e.usage(), include_usage)
            }
            Event::Failed(e) => {
                metrics.metrics.failed(&e);
                vec![ApiError::from(e).body()]
            }
            other => wire::event_chunks(&env, &other),
        },
    )
    .await?;
    Ok(crate::sse::data(rx))
}
