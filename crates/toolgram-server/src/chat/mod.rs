//! OpenAI's Chat Completions API: `POST /v1/chat/completions` (JSON or SSE, `[DONE]` last),
//! on the run stage. [`read`] maps the request to the runtime, [`wire`] maps the reply back;
//! the handlers here only connect the two. This module must not compile, decode or validate.

pub mod read;
pub mod wire;

pub use read::{ChatRequest, read};

use crate::app::App;
use crate::error::ApiError;
use crate::handler;
use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::post;
use std::sync::Arc;
use toolgram_runtime::Event;
use wire::Envelope;

/// This route, as the metrics name it.
const ROUTE: &str = "/v1/chat/completions";

/// This API's routes.
pub fn routes() -> Router<Arc<App>> {
    Router::new().route(ROUTE, post(completions))
}

/// `POST /v1/chat/completions`.
async fn completions(State(app): State<Arc<App>>, req: Request) -> HttpResponse {
    let result = async {
        let chat = handler::read_checked(&app, req, ROUTE, read).await?;
        if chat.api.stream {
            stream(Arc::clone(&app), chat).await
        } else {
            reply(Arc::clone(&app), chat).await
        }
    }
    .await;
    result.unwrap_or_else(IntoResponse::into_response)
}

/// A Chat Completions request ready to run.
type Checked = handler::Checked<read::ChatFields>;

fn envelope(app: &App, chat: &Checked) -> Envelope {
    Envelope {
        id: app.new_id("chatcmpl"),
        created: app.now(),
        model: chat.served.id.clone(),
    }
}

/// Answer a non-streamed request.
async fn reply(app: Arc<App>, chat: Checked) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &chat);
    match crate::run::run(&app, &chat.served, chat.req).await? {
        Ok(r) => {
            app.metrics.reply(ROUTE, &env.model, &r, None);
            let toolgram = crate::app::toolgram_json(Some(&r), &chat.notes);
            Ok(axum::Json(wire::completion(&env, &r, toolgram)).into_response())
        }
        Err(e) if e.kind() == "truncated" => {
            app.metrics.failed(&e);
            let toolgram = crate::app::cut_toolgram_json(&e, &chat.notes);
            Ok(axum::Json(wire::truncated(&env, &e, toolgram)).into_response())
        }
        Err(e) => {
            app.metrics.failed(&e);
            Err(e.into())
        }
    }
}

/// Answer a streamed request: Server-Sent Events as the reply is decoded.
async fn stream(app: Arc<App>, chat: Checked) -> Result<HttpResponse, ApiError> {
    let env = envelope(&app, &chat);
    let start = vec![wire::role_chunk(&env)];
    let (include_usage, notes) = (chat.api.include_usage, chat.notes);
    let metrics = Arc::clone(&app);
    let rx =
        crate::run::forward(
            &app,
            &chat.served,
            chat.req,
            start,
            move |event, clock| match event {
                Event::Done(r) => {
                    metrics
                        .metrics
                        .reply(ROUTE, &env.model, &r, Some(clock.first_token()));
                    let toolgram = crate::app::toolgram_json(Some(&r), &notes);
                    wire::reply_end_chunks(&env, &r.reply(), Some(toolgram), include_usage)
                }
                Event::Failed(e) if e.kind() == "truncated" => {
                    metrics.metrics.failed(&e);
                    let toolgram = crate::app::cut_toolgram_json(&e, &notes);
                    wire::truncated_chunks(&env, &e, toolgram, include_usage)
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
