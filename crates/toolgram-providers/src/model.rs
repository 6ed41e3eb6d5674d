//! A provider as a model the retry loop (`toolgram-retry`) drives: each attempt renders the
//! conversation for the chosen path, sends it and reads the reply.

use crate::capability::{Kind, Path};
use crate::error::ProviderError;
use crate::http::{HttpOptions, post, post_json};
use crate::render::{RenderInput, render};
use crate::reply::{ReadError, read_reply};
use crate::stream::assemble;
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_retry::{AttemptError, CallModel, ModelReply};

/// One provider endpoint with a fixed request.
pub struct ProviderModel<'a> {
    /// The provider.
    pub kind: Kind,
    /// Base URL (`http://127.0.0.1:8080`, `https://api.openai.com`, …).
    pub base_url: String,
    /// Model id.
    pub model: Option<String>,
    /// The pool.
    pub tools: &'a ToolSet,
    /// The choice.
    pub choice: ToolChoice,
    /// Several calls allowed.
    pub parallel: bool,
    /// The path chosen by capability gating.
    pub path: Path,
    /// Call syntax for the grammar and prompt paths.
    pub syntax: &'static CallSyntax,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Token limit.
    pub max_tokens: Option<usize>,
    /// Stream the reply (assembled before it is read).
    pub stream: bool,
    /// How to send.
    pub http: HttpOptions,
}

impl CallModel for ProviderModel<'_> {
    type Error = ProviderError;

    fn attempt(
        &mut self,
        messages: &[ChatMessage],
    ) -> Result<ModelReply, AttemptError<ProviderError>> {
        let rendered = render(&RenderInput {
            kind: self.kind,
            messages,
            tools: self.tools,
            choice: &self.choice,
            parallel: self.parallel,
            model: self.model.as_deref(),
            path: self.path,
            syntax: self.syntax,
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            stream: self.stream,
        })
        .map_err(AttemptError::Fatal)?;
        let url = format!(
            "{}{}",
            self.base_url.trim_end_matches('/'),
            rendered.endpoint
        );
        let reply = if self.stream {
            post(self.kind, &url, &rendered.body, &self.http)
                .and_then(|text| assemble(self.kind, &text))
        } else {
            post_json(self.kind, &url, &rendered.body, &self.http)
        }
        .map_err(AttemptError::Fatal)?;
        read_reply(
            self.kind,
            self.path,
            &reply,
            self.tools,
            &self.choice,
            self.syntax,
        )
        .map_err(|e| match e {
            ReadError::Unreadable { raw, message } => AttemptError::Unreadable { raw, message },
            ReadError::Shape(e) => AttemptError::Fatal(e),
        })
    }
}
