//! A provider behind the run stage: the path chosen by capability (grammar → strict JSON →
//! prompt, reported with its reason, or an error with fallback off), the provider driven
//! through the same retry loop as the embedded engine, and its reply returned as the same
//! [`Response`]. This module must not speak HTTP or render bodies: `toolgram-providers` does.

use crate::error::RunError;
use crate::post::typed_calls;
use crate::request::Request;
use crate::response::{FinishReason, Response};
use toolgram_core::define::request::{Mode, Path, Think};
use toolgram_core::syntax::CallSyntax;
use toolgram_engine::Sampling;
use toolgram_providers::{
    Endpoint, HttpOptions, ProviderModel, RenderInput, Rendered, Resolved, choose_path, render,
};

/// A resolved provider.
#[derive(Debug, Clone)]
pub(crate) struct Remote {
    pub provider: Resolved,
    /// Ask the provider to stream (the reply is assembled before it is read).
    pub stream: bool,
}

/// What `render` shows: the path, why, and the request.
#[derive(Debug)]
pub struct RenderedRequest {
    /// The path that would run.
    pub path: Path,
    /// Why.
    pub path_reason: String,
    /// Full URL.
    pub url: String,
    /// The request.
    pub rendered: Rendered,
}

fn wanted(mode: Mode) -> Path {
    match mode {
        Mode::Grammar => Path::Grammar,
        Mode::Json => Path::StrictJson,
        Mode::Prompt => Path::Prompt,
    }
}

fn call_syntax(name: Option<&str>) -> Result<&'static CallSyntax, RunError> {
    crate::user_files::named_syntax(name.unwrap_or("hermes"))
}

/// What a provider is not sent though it is on by default, said in the reply's warnings: the
/// plan and the bound on calls per reply (`serve --max-calls-per-reply`), where several calls
/// may be made (a provider runs its own grammar).
fn unsent_defaults(req: &Request) -> Vec<String> {
    let several = req.parallel_tool_calls && !req.tools.is_empty();
    let mut warnings = Vec::new();
    if several && req.sampling.plan.is_on() {
        warnings.push("`plan` is off for this request: a provider is not sent the plan yet (the embedded engine plans where several calls may be made)".to_owned());
    }
    if let Some(most) = req.sampling.max_calls.filter(|_| several) {
        warnings.push(format!("the bound of {most} calls per reply is not sent to a provider yet: its reply may hold more"));
    }
    warnings
}

/// Options providers are not sent yet are refused by name, never dropped.
fn refuse_unsent(req: &Request) -> Result<(), RunError> {
    let d = Sampling::default();
    let s = &req.sampling;
    let unsent = [
        ("response_format", req.response_format.is_some()),
        ("top_p", s.top_p != d.top_p),
        ("seed", s.seed.is_some()),
        ("stop", !s.stop.is_empty()),
        ("logit_bias", !s.logit_bias.is_empty()),
        ("think", req.think != Think::Off),
        ("few_shot", req.few_shot && req.mode != Mode::Prompt),
        ("unconstrained", s.unconstrained),
        ("no_fast_forward", s.no_fast_forward),
        // One decision step's bias: a provider's `logit_bias` acts at every step.
        ("call_bias", s.call_bias.is_some()),
        ("count_bias", s.count_bias.is_some()),
    ];
    match unsent.iter().find(|(_, set)| *set) {
        Some((name, _)) => Err(RunError::InvalidRequest(format!(
            "`{name}` is not sent to providers yet; leave it out or use the embedded engine"
        ))),
        None => Ok(()),
    }
}

impl Remote {
    fn path(&self, req: &Request) -> Result<(Path, String), RunError> {
        let p = &self.provider;
        Ok(choose_path(
            p.kind,
            p.capabilities,
            wanted(req.mode),
            p.fallback,
        )?)
    }

    fn input<'a>(
        &'a self,
        req: &'a Request,
        path: Path,
        syntax: &'static CallSyntax,
    ) -> RenderInput<'a> {
        RenderInput {
            kind: self.provider.kind,
            messages: &req.messages,
            tools: &req.tools,
            choice: &req.tool_choice,
            parallel: req.parallel_tool_calls,
            model: self.provider.model.as_deref(),
            path,
            syntax,
            temperature: Some(req.sampling.temperature),
            max_tokens: Some(req.sampling.max_tokens),
            stream: self.stream,
        }
    }

    /// The exact request `run` would send first.
    pub(crate) fn render(&self, req: &Request) -> Result<RenderedRequest, RunError> {
        let (path, path_reason) = self.path(req)?;
        let syntax = call_syntax(req.syntax.as_deref())?;
        let rendered = render(&self.input(req, path, syntax))?;
        Ok(RenderedRequest {
            path,
            path_reason,
            url: format!(
                "{}{}",
                self.provider.base_url.trim_end_matches('/'),
                rendered.endpoint
            ),
            rendered,
        })
    }

    /// Run `req` under the retry loop.
    pub(crate) fn run(&self, req: &Request) -> Result<Response, RunError> {
        refuse_unsent(req)?;
        let (path, path_reason) = self.path(req)?;
        let syntax = call_syntax(req.syntax.as_deref())?;
        let p = &self.provider;
        let mut model = ProviderModel {
            provider: Endpoint {
                kind: p.kind,
                base_url: p.base_url.clone(),
                capabilities: p.capabilities,
                http: HttpOptions {
                    api_key: p.api_key.clone(),
                    ..HttpOptions::default()
                },
            },
            model: p.model.clone(),
            tools: &req.tools,
            choice: req.tool_choice.clone(),
            parallel: req.parallel_tool_calls,
            path,
            syntax,
            temperature: Some(req.sampling.temperature),
            max_tokens: Some(req.sampling.max_tokens),
            stream: self.stream,
        };
        let outcome = toolgram_retry::run(
            &mut model,
            &req.tools,
            &req.tool_choice,
            &req.messages,
            req.retry,
        )?;
        let reply = outcome.reply;
        let finish_reason = if reply.tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        Ok(Response {
            raw: reply.raw,
            content: reply.content,
            reasoning: reply.reasoning_content,
            tool_calls: typed_calls(&req.tools, reply.tool_calls),
            finish_reason,
            usage: outcome.usage,
            attempts: outcome.attempts,
            failed_attempts: outcome.failed,
            warnings: unsent_defaults(req),
            ..Response::ran(
                path,
                path_reason,
                p.kind.name(),
                syntax.name,
                p.model.clone().unwrap_or_default(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgram_core::ToolSet;

    #[test]
    fn few_shot_outside_prompt_mode_is_refused_for_providers_not_dropped() {
        let tools = ToolSet::from_json_str("[]").expect("an empty pool");
        let mut req = Request::new(Vec::new(), tools);
        req.few_shot = true;
        let e = refuse_unsent(&req).expect_err("refused").to_string();
        assert!(e.contains("`few_shot`"), "{e}");
        // Prompt mode sends its instructions anyway: nothing is lost.
        req.mode = Mode::Prompt;
        assert!(refuse_unsent(&req).is_ok());
    }

    #[test]
    fn a_call_bias_is_refused_by_name_and_the_default_plan_and_call_bound_are_said_unsent() {
        let tools = ToolSet::from_json_str("[]").expect("an empty pool");
        let mut req = Request::new(Vec::new(), tools);
        req.sampling.call_bias = Some(4.0);
        let e = refuse_unsent(&req).expect_err("refused").to_string();
        assert!(e.contains("`call_bias`"), "{e}");
        req.sampling.plan = toolgram_core::define::request::Plan::Calls;
        assert!(
            unsent_defaults(&req).is_empty(),
            "one call at most: no plan"
        );
        req.parallel_tool_calls = true;
        assert!(
            unsent_defaults(&req).is_empty(),
            "no tools: nothing to plan"
        );
        let one = r#"[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]"#;
        req.tools = std::sync::Arc::new(ToolSet::from_json_str(one).expect("a pool"));
        assert!(unsent_defaults(&req)[0].contains("`plan` is off"));
        req.sampling.max_calls = Some(8);
        assert!(unsent_defaults(&req)[1].contains("bound of 8 calls"));
    }
}
