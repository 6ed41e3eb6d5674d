//! Errors in OpenAI's shape — `{"error": {"message", "type", "param", "code"}}` — with the
//! HTTP status each deserves, from the run stage's typed [`RunError`] or from reading the
//! request. This module must not decide what a request means.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use toolgram_runtime::RunError;

/// An error as the API returns it (boxed: handlers return it on every path).
#[derive(Debug)]
pub struct ApiError(Box<Fields>);

/// What an [`ApiError`] says.
#[derive(Debug)]
pub struct Fields {
    /// HTTP status.
    pub status: StatusCode,
    /// OpenAI's `type` (`invalid_request_error`, …).
    pub kind: &'static str,
    /// The request field at fault.
    pub param: Option<String>,
    /// A stable code (toolgram's error kind where there is one).
    pub code: String,
    /// What went wrong.
    pub message: String,
    /// toolgram's extra fields (failed attempts, partial text, …).
    pub details: Value,
}

impl ApiError {
    /// A 400 naming the field.
    pub fn invalid(param: &str, message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "invalid_value",
            message,
        )
        .param(param)
    }

    /// An error with a status, OpenAI type, code and message.
    pub fn new(
        status: StatusCode,
        kind: &'static str,
        code: &str,
        message: impl Into<String>,
    ) -> Self {
        Self(Box::new(Fields {
            status,
            kind,
            param: None,
            code: code.to_owned(),
            message: message.into(),
            details: Value::Null,
        }))
    }

    /// A server-side failure of `what` (a blocking task that panicked or was cancelled).
    pub fn internal(what: &str, e: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "internal_error",
            format!("{what} failed: {e}"),
        )
    }

    /// The same error with toolgram's extra fields (`error.toolgram`).
    pub fn with_details(mut self, details: Value) -> Self {
        self.0.details = details;
        self
    }

    /// The same error naming the field at fault.
    pub fn param(mut self, param: &str) -> Self {
        self.0.param = Some(param.to_owned());
        self
    }

    /// The same error with the field `from` called `to` (an API's own name for it).
    pub fn renamed_param(mut self, from: &str, to: &str) -> Self {
        if self.0.param.as_deref() == Some(from) {
            self.0.param = Some(to.to_owned());
        }
        self
    }

    /// What it says.
    pub fn fields(&self) -> &Fields {
        &self.0
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        let f = &self.0;
        let mut err = json!({"message": f.message, "type": f.kind,
            "param": f.param, "code": f.code});
        if !f.details.is_null() {
            err["toolgram"] = f.details.clone();
        }
        json!({ "error": err })
    }
}

impl From<toolgram_wire::WireError> for ApiError {
    fn from(e: toolgram_wire::WireError) -> Self {
        Self::invalid(&e.param, e.message)
    }
}

impl From<RunError> for ApiError {
    fn from(e: RunError) -> Self {
        let kind = e.kind();
        let (status, openai_type) = match kind {
            "busy" => (StatusCode::TOO_MANY_REQUESTS, "rate_limit_error"),
            "no_valid_call" | "retry_blocked" | "repeated_call" | "invalid_output" => {
                (StatusCode::UNPROCESSABLE_ENTITY, "invalid_response_error")
            }
            "provider_error" => (StatusCode::BAD_GATEWAY, "api_error"),
            "model_fetch_error" | "engine_stopped" => {
                (StatusCode::SERVICE_UNAVAILABLE, "api_error")
            }
            // A run is cancelled when its time ran out (a client gone reads no status).
            "cancelled" => (StatusCode::GATEWAY_TIMEOUT, "timeout_error"),
            _ => match e.status() {
                toolgram_runtime::Status::Client => {
                    (StatusCode::BAD_REQUEST, "invalid_request_error")
                }
                toolgram_runtime::Status::Unavailable => {
                    (StatusCode::SERVICE_UNAVAILABLE, "api_error")
                }
                toolgram_runtime::Status::Server => {
                    (StatusCode::INTERNAL_SERVER_ERROR, "server_error")
                }
            },
        };
        let param = match kind {
            "invalid_tools" => Some("tools".to_owned()),
            "context_overflow" => Some("messages".to_owned()),
            "invalid_schema" => Some("response_format".to_owned()),
            _ => None,
        };
        let code = if kind == "context_overflow" {
            "context_length_exceeded"
        } else {
            kind
        };
        Self(Box::new(Fields {
            status,
            kind: openai_type,
            param,
            code: code.to_owned(),
            message: e.to_string(),
            details: e.details(),
        }))
    }
}

impl ApiError {
    /// `body` as the response, with the headers its status calls for: `Retry-After` on a
    /// 429; `Connection: close` on a 413 or a 408, whose unread body would otherwise be taken
    /// for the next request on a kept-alive connection.
    pub fn respond(&self, body: Value) -> Response {
        let status = self.0.status;
        let mut resp = (status, axum::Json(body)).into_response();
        if status == StatusCode::TOO_MANY_REQUESTS {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if matches!(
            status,
            StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
        ) {
            resp.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        resp
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.respond(self.body())
    }
}
