//! A provider as a model the retry loop (`toolgram-retry`) drives: each attempt renders the
//! conversation for the chosen path, sends it and reads the reply.

use crate::error::ProviderError;
use crate::provider::Provider;
use crate::spec::{ReadError, RenderInput};
use toolgram_core::define::request::Path;
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_retry::{AttemptError, CallModel, ModelReply};

/// A provider with a fixed request, as a model the retry loop drives.
pub struct ProviderModel<'a, P: Provider> {
    /// The provider.
    pub provider: P,
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
}

impl<P: Provider> CallModel for ProviderModel<'_, P> {
    type Error = ProviderError;

    fn attempt(
        &mut self,
        messages: &[ChatMessage],
    ) -> Result<ModelReply, AttemptError<ProviderError>> {
        let rendered = self
            .provider
            .render(&RenderInput {
                kind: self.provider.kind(),
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
        let reply = self
            .provider
            .send(&rendered, self.stream)
            .map_err(AttemptError::Fatal)?;
        self.provider
            .parse(&reply, self.path, self.tools, &self.choice, self.syntax)
            .map_err(|e| match e {
                ReadError::Unreadable { raw, message } => AttemptError::Unreadable { raw, message },
                ReadError::Shape(e) => AttemptError::Fatal(e),
            })
    }
}
