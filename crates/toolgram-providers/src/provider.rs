//! The provider trait: render a request, send it, read the reply, say what it can enforce.
//! [`Endpoint`] implements it for every HTTP provider through its row ([`Kind`], one entry of
//! the registry); the embedded engine is the CLI's other path (this crate must not link a
//! model).

use crate::error::ProviderError;
use crate::http::{HttpOptions, post, post_json, post_lines};
use crate::render::{RenderPlan, Rendered, render_planned};
use crate::reply::read_reply;
use crate::spec::{Capabilities, Kind, ReadError, RenderInput};
use crate::stream::{assemble, line_text};
use serde_json::Value;
use toolgram_core::ToolSet;
use toolgram_core::define::request::{CallShape, Path};
use toolgram_core::syntax::CallSyntax;
use toolgram_retry::ModelReply;

/// What every provider does.
pub trait Provider {
    /// Its registry row.
    fn kind(&self) -> Kind;
    /// What it can enforce.
    fn capabilities(&self) -> Capabilities;
    /// The request for `input`, around its `plan` ([`RenderPlan::new`] of the same input's
    /// pool, shape and path).
    fn render(&self, input: &RenderInput, plan: &RenderPlan) -> Result<Rendered, ProviderError>;
    /// Send a rendered request; a streamed reply comes back assembled.
    fn send(&self, rendered: &Rendered, stream: bool) -> Result<Value, ProviderError>;
    /// Send a rendered request that streams, handing `text` what each event adds to the
    /// reply's content as it arrives; the reply comes back assembled. By default nothing is
    /// seen before the whole reply.
    fn send_live(
        &self,
        rendered: &Rendered,
        text: &mut dyn FnMut(&str),
    ) -> Result<Value, ProviderError> {
        let _ = text;
        self.send(rendered, true)
    }
    /// Read a reply body into calls; `shape` is the one its request was rendered for.
    fn parse(
        &self,
        body: &Value,
        path: Path,
        tools: &ToolSet,
        shape: &CallShape,
        syntax: &'static CallSyntax,
    ) -> Result<ModelReply, ReadError>;
}

/// An HTTP provider at a base URL.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Its registry row.
    pub kind: Kind,
    /// Base URL (`http://127.0.0.1:8080`, `https://api.openai.com`, …).
    pub base_url: String,
    /// What it can enforce (its documented capabilities, minus any switched off).
    pub capabilities: Capabilities,
    /// How to send.
    pub http: HttpOptions,
}

impl Endpoint {
    fn url(&self, rendered: &Rendered) -> String {
        endpoint_url(&self.base_url, &rendered.endpoint)
    }
}

/// The URL of `endpoint` (`/v1/chat/completions`, …) under `base`. A base that already ends
/// in the endpoint's version segment — `http://host:8000/v1`, as OpenAI's SDKs and vLLM's docs
/// write it — does not get it twice.
pub fn endpoint_url(base: &str, endpoint: &str) -> String {
    let base = base.trim_end_matches('/');
    let version = endpoint
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or("");
    match base.strip_suffix(version) {
        Some(rest) if !version.is_empty() && rest.ends_with('/') => {
            format!("{base}{}", &endpoint[1 + version.len()..])
        }
        _ => format!("{base}{endpoint}"),
    }
}

impl Provider for Endpoint {
    fn kind(&self) -> Kind {
        self.kind
    }

    fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    fn render(&self, input: &RenderInput, plan: &RenderPlan) -> Result<Rendered, ProviderError> {
        render_planned(input, plan)
    }

    fn send(&self, rendered: &Rendered, stream: bool) -> Result<Value, ProviderError> {
        let url = self.url(rendered);
        if stream {
            post(self.kind, &url, &rendered.body, &self.http).and_then(|t| assemble(self.kind, &t))
        } else {
            post_json(self.kind, &url, &rendered.body, &self.http)
        }
    }

    fn send_live(
        &self,
        rendered: &Rendered,
        text: &mut dyn FnMut(&str),
    ) -> Result<Value, ProviderError> {
        let url = self.url(rendered);
        let kind = self.kind;
        let whole = post_lines(kind, &url, &rendered.body, &self.http, &mut |line| {
            let added = line_text(kind, line);
            if !added.is_empty() {
                text(&added);
            }
        })?;
        assemble(kind, &whole)
    }

    fn parse(
        &self,
        body: &Value,
        path: Path,
        tools: &ToolSet,
        shape: &CallShape,
        syntax: &'static CallSyntax,
    ) -> Result<ModelReply, ReadError> {
        let mut reply = read_reply(self.kind, path, body, tools, shape, syntax)?;
        reply.usage = crate::usage::read_usage(self.kind, body);
        Ok(reply)
    }
}

#[cfg(test)]
mod url_tests {
    use super::endpoint_url;

    #[test]
    fn a_base_url_ending_in_the_version_does_not_get_it_twice() {
        let chat = "/v1/chat/completions";
        for base in [
            "http://h:8000",
            "http://h:8000/",
            "http://h:8000/v1",
            "http://h:8000/v1/",
        ] {
            assert_eq!(
                endpoint_url(base, chat),
                "http://h:8000/v1/chat/completions",
                "{base}"
            );
        }
        assert_eq!(
            endpoint_url("http://h/api/v1", chat),
            "http://h/api/v1/chat/completions"
        );
        // Only a whole segment counts.
        assert_eq!(
            endpoint_url("http://h/xv1", chat),
            "http://h/xv1/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url(
                "https://g.example/v1beta",
                "/v1beta/models/m:generateContent"
            ),
            "https://g.example/v1beta/models/m:generateContent"
        );
    }
}
