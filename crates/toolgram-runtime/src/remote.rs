//! A provider behind the run stage: the path chosen by capability (grammar → strict JSON →
//! prompt, reported with its reason, or an error with fallback off), the provider driven
//! through the same retry loop as the embedded engine, and its reply returned as the same
//! [`Response`]. This module must not speak HTTP or render bodies: `toolgram-providers` does.

use crate::error::RunError;
use crate::post::{self, typed_calls};
use crate::request::Request;
use crate::response::{FinishReason, Response};
use crate::stream::ScanOptions;
use toolgram_core::ToolChoice;
use toolgram_core::define::request::{CallShape, Mode, Path, Think};
use toolgram_core::syntax::{CallBody, CallSyntax};
use toolgram_engine::Sampling;
use toolgram_providers::{
    Endpoint, HttpOptions, LiveReply, ProviderModel, RenderInput, Rendered, Resolved, choose_path,
    render,
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
    /// The request sent next when the first reply calls, under [`Plan::Calls`](toolgram_core::define::request::Plan::Calls) on the grammar
    /// path: the same under the plan with a call required, whose reply replaces the first
    /// where it counts several calls.
    pub counted: Option<Rendered>,
    /// Levers on by default that this provider is not sent, off for the request.
    pub warnings: Vec<String>,
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

/// Levers on by default that a provider cannot take, off for this request and said in the
/// reply's warnings: the plan and the bound on calls per reply (`serve --max-calls-per-reply`)
/// off the grammar path (on it both are compiled into the GBNF), and the default call and
/// count biases, which act at one decoding step (a provider's `logit_bias` acts at every one).
fn unsent_defaults(req: &Request, path: Path, syntax: &CallSyntax) -> Vec<String> {
    let shape = &req.shape;
    let mut warnings = Vec::new();
    let planned = shape.plans(&req.tools, syntax);
    let several = shape.parallel && !req.tools.is_empty();
    if path != Path::Grammar {
        if planned {
            warnings.push(format!("`plan` is off for this request: the {} path has no grammar to plan in (the grammar path compiles it into its GBNF)", path.name()));
        }
        if let Some(most) = shape.max_calls.filter(|_| several) {
            warnings.push(format!("the bound of {most} calls per reply is off for this request: the {} path has no grammar to bound them in, so the reply may hold more", path.name()));
        }
    }
    let n = req.tools.tools().len();
    let call_bias = req.sampling.call_bias_for(n, shape.plan);
    if call_bias != 0.0
        && !shape.choice.requires_call()
        && shape.choice != ToolChoice::None
        && n > 0
    {
        warnings.push(format!("the default call bias {call_bias:+} is off for this request: it acts at one decoding step, which a provider's `logit_bias` cannot say"));
    }
    let count_bias = req.sampling.count_bias_for(n, shape.plan);
    if count_bias != 0.0 && planned && path == Path::Grammar {
        warnings.push(format!("the default count bias {count_bias:+} is off for this request: it acts at the plan's count, which a provider's `logit_bias` cannot say"));
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
        ("think", req.shape.think != Think::Off),
        ("few_shot", req.few_shot && req.shape.mode != Mode::Prompt),
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
            wanted(req.shape.mode),
            p.fallback,
        )?)
    }

    fn input<'a>(
        &'a self,
        req: &'a Request,
        shape: &'a CallShape,
        path: Path,
        syntax: &'static CallSyntax,
    ) -> RenderInput<'a> {
        RenderInput {
            kind: self.provider.kind,
            messages: &req.messages,
            tools: &req.tools,
            shape,
            model: self.provider.model.as_deref(),
            path,
            syntax,
            temperature: Some(req.sampling.temperature),
            max_tokens: Some(req.sampling.max_tokens),
            stream: self.stream,
        }
    }

    /// The exact request `run` would send first, and the one it sends next when that reply
    /// calls under [`Plan::Calls`](toolgram_core::define::request::Plan::Calls) on the grammar path (counted under the plan).
    /// What `run` refuses, `render` refuses too.
    pub(crate) fn render(&self, req: &Request) -> Result<RenderedRequest, RunError> {
        refuse_unsent(req)?;
        let (path, path_reason) = self.path(req)?;
        let syntax = call_syntax(req.syntax.as_deref())?;
        let model = self.model(req, path, syntax);
        let rendered = render(&self.input(req, &model.first_shape(), path, syntax))?;
        let counted = if model.first_shape() != model.shape {
            Some(render(&self.input(
                req,
                &model.shape.calling(),
                path,
                syntax,
            ))?)
        } else {
            None
        };
        Ok(RenderedRequest {
            path,
            path_reason,
            url: toolgram_providers::endpoint_url(&self.provider.base_url, &rendered.endpoint),
            rendered,
            counted,
            warnings: unsent_defaults(req, path, syntax),
        })
    }

    /// The provider as the model the retry loop drives, for `req` on `path`.
    fn model<'a>(
        &self,
        req: &'a Request,
        path: Path,
        syntax: &'static CallSyntax,
    ) -> ProviderModel<'a, Endpoint> {
        let p = &self.provider;
        ProviderModel {
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
            shape: req.shape.clone(),
            path,
            syntax,
            temperature: Some(req.sampling.temperature),
            max_tokens: Some(req.sampling.max_tokens),
            stream: self.stream,
            show_plan: req.show_plan,
            plans: Vec::new(),
            live: None,
        }
    }

    /// The scanner's options where `req`'s reply may be streamed as the provider sends it:
    /// the grammar path, one request per attempt (no plan to count), a JSON call body the
    /// scanner reads, and nothing the run stage may still change
    /// ([`post::run_may_change`]); whether the GBNF left a keyword to the validator is the
    /// provider model's to judge. `None`: the reply is sent when the run ends.
    pub(crate) fn live_scan(&self, req: &Request) -> Option<ScanOptions> {
        let (path, _) = self.path(req).ok()?;
        let syntax = call_syntax(req.syntax.as_deref()).ok()?;
        let live = path == Path::Grammar
            && syntax.body == CallBody::Json
            && !req.shape.plans(&req.tools, syntax)
            && !post::run_may_change(req);
        live.then(|| ScanOptions {
            syntax,
            think: false,
            calls: req.shape.choice != ToolChoice::None,
            plain: false,
        })
    }

    /// Run `req` under the retry loop; `live` sees each attempt's text as it arrives where
    /// the provider model streams it.
    pub(crate) fn run<'r>(
        &self,
        req: &'r Request,
        live: Option<Box<dyn LiveReply + 'r>>,
    ) -> Result<Response, RunError> {
        refuse_unsent(req)?;
        let (path, path_reason) = self.path(req)?;
        let syntax = call_syntax(req.syntax.as_deref())?;
        let p = &self.provider;
        let mut model = self.model(req, path, syntax);
        model.live = live;
        let outcome = toolgram_retry::run(
            &mut model,
            &req.tools,
            &req.shape.choice,
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
            warnings: unsent_defaults(req, path, syntax),
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
        req.shape.mode = Mode::Prompt;
        assert!(refuse_unsent(&req).is_ok());
    }

    #[test]
    fn a_call_bias_is_refused_by_name_and_defaults_a_path_cannot_take_are_said_off() {
        let tools = ToolSet::from_json_str("[]").expect("an empty pool");
        let mut req = Request::new(Vec::new(), tools);
        req.sampling.call_bias = Some(4.0);
        let e = refuse_unsent(&req).expect_err("refused").to_string();
        assert!(e.contains("`call_bias`"), "{e}");
        req.sampling.call_bias = None;
        req.shape.plan = toolgram_core::define::request::Plan::Calls;
        let hermes = call_syntax(None).expect("hermes");
        let said = |req: &Request, path| unsent_defaults(req, path, hermes);
        assert!(
            said(&req, Path::StrictJson).is_empty(),
            "one call at most: no plan"
        );
        req.shape.parallel = true;
        assert!(
            said(&req, Path::StrictJson).is_empty(),
            "no tools: nothing to plan"
        );
        let one = r#"[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]"#;
        req.tools = std::sync::Arc::new(ToolSet::from_json_str(one).expect("a pool"));
        req.shape.max_calls = Some(8);
        let strict = said(&req, Path::StrictJson);
        assert!(strict[0].contains("`plan` is off"), "{strict:?}");
        assert!(strict[1].contains("bound of 8 calls"), "{strict:?}");
        // The grammar path compiles the plan and the bound; only the count's default bias,
        // which acts at one decoding step, is off.
        let grammar = said(&req, Path::Grammar);
        assert_eq!(grammar.len(), 1, "{grammar:?}");
        assert!(
            grammar[0].contains("default count bias +1.5"),
            "{grammar:?}"
        );
    }
}
