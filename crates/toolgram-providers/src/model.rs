//! A provider as a model the retry loop (`toolgram-retry`) drives: each attempt renders the
//! conversation for the chosen path, sends it and reads the reply. Under [`Plan::Calls`] on
//! the grammar path an attempt is the embedded engine's two steps as two requests: the reply
//! without a plan chooses call or text, and one that calls is asked again under the plan with
//! a call required; the counted reply replaces it where it counts several calls. It must not
//! validate (the retry loop does) or choose the path (the run stage does).

use crate::error::ProviderError;
use crate::provider::Provider;
use crate::render::RenderPlan;
use crate::spec::{ReadError, RenderInput};
use toolgram_core::define::request::{CallShape, Path, Plan};
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ChatMessage, ToolSet};
use toolgram_retry::{AttemptError, CallModel, ModelReply};

/// A provider with a fixed request, as a model the retry loop drives.
pub struct ProviderModel<'a, P: Provider> {
    /// The provider.
    pub provider: P,
    /// Model id.
    pub model: Option<String>,
    /// The pool.
    pub tools: &'a ToolSet,
    /// What the call grammar is compiled for (choice, parallel calls, plan, bound on calls).
    pub shape: CallShape,
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
    /// Return a planned reply's plan line as its reasoning (a client that asked for the plan
    /// or for reasoning); otherwise it is dropped, as on the embedded engine.
    pub show_plan: bool,
    /// The render plans made so far, one per shape asked ([`RenderPlan`]: the pool and the
    /// GBNF compiled once, whatever the number of attempts); start with none.
    pub plans: Vec<(CallShape, RenderPlan)>,
    /// Who sees each attempt's reply text as the provider streams it: streamed live where an
    /// attempt is one request (not a plan's two) and its grammar defers no keyword, so the
    /// text is the reply unless validation says otherwise; `None`: read whole.
    pub live: Option<Box<dyn LiveReply + 'a>>,
}

/// What sees a reply's text as a provider streams it ([`ProviderModel::live`]).
pub trait LiveReply {
    /// An attempt's request is sent: what an earlier attempt streamed is void.
    fn started(&mut self);
    /// More of the reply's text.
    fn text(&mut self, delta: &str);
}

impl<P: Provider> ProviderModel<'_, P> {
    /// The shape of an attempt's first request: without the plan where [`Plan::Calls`] lets
    /// the unplanned reply choose call or text first.
    pub fn first_shape(&self) -> CallShape {
        if self.decides_first() {
            self.shape.unplanned()
        } else {
            self.shape.clone()
        }
    }

    /// Whether an attempt asks twice: the grammar path, a plan of [`Plan::Calls`] that applies
    /// to this pool, and a reply that may call or not.
    fn decides_first(&self) -> bool {
        self.path == Path::Grammar
            && self.shape.plan == Plan::Calls
            && !self.shape.choice.requires_call()
            && self.shape.plans(self.tools, self.syntax)
    }

    /// The render plans made so far: one per distinct call shape (the first request's and,
    /// under [`Plan::Calls`], the counted one's), however many attempts there were.
    pub fn plans_made(&self) -> usize {
        self.plans.len()
    }

    /// One request of `shape` for `messages`, sent and read; its render plan made on the
    /// shape's first request and kept.
    fn ask(
        &mut self,
        messages: &[ChatMessage],
        shape: &CallShape,
    ) -> Result<ModelReply, AttemptError<ProviderError>> {
        let live = self.live.is_some() && !self.decides_first();
        let input = RenderInput {
            kind: self.provider.kind(),
            messages,
            tools: self.tools,
            shape,
            model: self.model.as_deref(),
            path: self.path,
            syntax: self.syntax,
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            stream: self.stream || live,
        };
        let at = match self.plans.iter().position(|(s, _)| s == shape) {
            Some(at) => at,
            None => {
                let plan = RenderPlan::new(&input).map_err(AttemptError::Fatal)?;
                self.plans.push((shape.clone(), plan));
                self.plans.len() - 1
            }
        };
        let rendered = self
            .provider
            .render(&input, &self.plans[at].1)
            .map_err(AttemptError::Fatal)?;
        let sent = match self
            .live
            .as_mut()
            .filter(|_| live && self.plans[at].1.final_by_grammar())
        {
            Some(observer) => {
                observer.started();
                self.provider
                    .send_live(&rendered, &mut |delta| observer.text(delta))
            }
            None => self.provider.send(&rendered, input.stream),
        };
        let reply = sent.map_err(AttemptError::Fatal)?;
        self.provider
            .parse(&reply, self.path, self.tools, shape, self.syntax)
            .map_err(|e| match e {
                ReadError::Unreadable { raw, message } => AttemptError::Unreadable { raw, message },
                ReadError::Shape(e) => AttemptError::Fatal(e),
            })
    }
}

impl<P: Provider> CallModel for ProviderModel<'_, P> {
    type Error = ProviderError;

    fn attempt(
        &mut self,
        messages: &[ChatMessage],
    ) -> Result<ModelReply, AttemptError<ProviderError>> {
        let first = self.ask(messages, &self.first_shape())?;
        let mut reply = if self.decides_first() && !first.tool_calls.is_empty() {
            let counted = self.ask(messages, &self.shape.calling())?;
            let usage = match (first.usage, counted.usage) {
                (Some(mut a), Some(b)) => {
                    a += b;
                    Some(a)
                }
                (a, b) => a.or(b),
            };
            // Counted at one, the unplanned reply stands (the embedded engine's rule), with
            // the count's line.
            let plan = counted.reasoning_content.clone();
            let mut kept = if counted.tool_calls.len() > 1 {
                counted
            } else {
                first
            };
            kept.usage = usage;
            kept.reasoning_content = plan;
            kept
        } else {
            first
        };
        // Under our grammar the only reasoning is the plan line.
        if self.path == Path::Grammar && !self.show_plan {
            reply.reasoning_content = None;
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{Rendered, render_planned};
    use crate::spec::{Capabilities, Kind};
    use serde_json::{Value, json};
    use std::cell::RefCell;
    use toolgram_core::ToolChoice;
    use toolgram_core::compile::PLAN_PREFIX;

    /// A llama-server whose replies are scripted (Chat Completions' documented shape); the
    /// requests it is sent are kept. Rendering and reading are the real ones.
    struct Scripted {
        replies: RefCell<Vec<&'static str>>,
        sent: RefCell<Vec<Value>>,
    }

    impl Provider for &Scripted {
        fn kind(&self) -> Kind {
            crate::lookup("llama-server").expect("llama-server")
        }
        fn capabilities(&self) -> Capabilities {
            self.kind().capabilities()
        }
        fn render(
            &self,
            input: &RenderInput,
            plan: &RenderPlan,
        ) -> Result<Rendered, ProviderError> {
            render_planned(input, plan)
        }
        fn send(&self, rendered: &Rendered, _: bool) -> Result<Value, ProviderError> {
            self.sent.borrow_mut().push(rendered.body.clone());
            let text = self.replies.borrow_mut().remove(0);
            Ok(json!({"choices": [{"message": {"role": "assistant", "content": text}}]}))
        }
        /// The scripted reply streamed four bytes at a time.
        fn send_live(
            &self,
            rendered: &Rendered,
            text: &mut dyn FnMut(&str),
        ) -> Result<Value, ProviderError> {
            let reply = self.send(rendered, true)?;
            let whole = reply["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or("");
            for piece in whole.as_bytes().chunks(4) {
                text(std::str::from_utf8(piece).expect("ASCII replies"));
            }
            Ok(reply)
        }
        fn parse(
            &self,
            body: &Value,
            path: Path,
            tools: &ToolSet,
            shape: &CallShape,
            syntax: &'static CallSyntax,
        ) -> Result<ModelReply, ReadError> {
            crate::reply::read_reply(self.kind(), path, body, tools, shape, syntax)
        }
    }

    const PARIS: &str = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    const TWO: &str = "Number of tool calls needed: 2\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n</tool_call>";
    const ONE: &str = "Number of tool calls needed: 1\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n</tool_call>";

    fn weather() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]"#,
        )
        .expect("a pool")
    }

    fn model<'a>(
        script: &'a Scripted,
        tools: &'a ToolSet,
        shape: CallShape,
    ) -> ProviderModel<'a, &'a Scripted> {
        ProviderModel {
            provider: script,
            model: None,
            tools,
            shape,
            path: Path::Grammar,
            syntax: toolgram_core::syntax::by_name("hermes").expect("hermes"),
            temperature: None,
            max_tokens: None,
            stream: false,
            show_plan: false,
            plans: Vec::new(),
            live: None,
        }
    }

    /// Several calls under [`Plan::Calls`], call or text the model's choice.
    fn planned_shape() -> CallShape {
        CallShape {
            choice: ToolChoice::Auto,
            parallel: true,
            plan: Plan::Calls,
            ..CallShape::default()
        }
    }

    fn script(replies: Vec<&'static str>) -> Scripted {
        Scripted {
            replies: RefCell::new(replies),
            sent: RefCell::new(Vec::new()),
        }
    }

    /// Run one attempt of a planned (`Plan::Calls`), parallel request over `replies`.
    fn attempt(replies: Vec<&'static str>, show_plan: bool) -> (ModelReply, Vec<String>) {
        let script = script(replies);
        let tools = weather();
        let shape = CallShape {
            max_calls: Some(3),
            ..planned_shape()
        };
        let mut model = ProviderModel {
            show_plan,
            ..model(&script, &tools, shape)
        };
        let reply = model
            .attempt(&[ChatMessage::text("user", "Weather in Paris and Lima?")])
            .unwrap_or_else(|_| panic!("an attempt"));
        let grammars = script
            .sent
            .borrow()
            .iter()
            .map(|b| b["grammar"].as_str().expect("our GBNF").to_owned())
            .collect();
        (reply, grammars)
    }

    #[test]
    fn a_calling_reply_is_counted_under_the_plan_in_a_second_request_and_a_text_reply_is_not() {
        let (reply, grammars) = attempt(vec![PARIS, TWO], false);
        assert_eq!(grammars.len(), 2);
        assert!(!grammars[0].contains(PLAN_PREFIX), "{}", grammars[0]);
        // The plan, a call required (no count of 0), and the bound of 3 in the grammar.
        assert!(grammars[1].contains(PLAN_PREFIX), "{}", grammars[1]);
        assert!(!grammars[1].contains("\"0\\n\""), "{}", grammars[1]);
        assert!(grammars[1].contains("\"3\\n\"") && !grammars[1].contains("\"4\\n\""));
        assert_eq!(reply.tool_calls.len(), 2, "{reply:?}");
        assert_eq!(
            reply.reasoning_content, None,
            "the plan line is not asked for"
        );
        // Counted at one: the unplanned reply stands, with the count's line where asked.
        let (reply, _) = attempt(vec![PARIS, ONE], true);
        assert_eq!(reply.tool_calls[0].arguments["city"], "Paris");
        assert_eq!(
            reply.reasoning_content.as_deref(),
            Some("Number of tool calls needed: 1")
        );
        // Text: one request.
        let (reply, grammars) = attempt(vec!["It is sunny."], true);
        assert_eq!(grammars.len(), 1);
        assert!(reply.tool_calls.is_empty() && reply.reasoning_content.is_none());
    }

    #[test]
    fn a_request_is_planned_once_per_shape_however_many_attempts_it_takes() {
        let script = script(vec!["Sunny, I think.", "Still no call.", PARIS]);
        let tools = weather();
        let shape = CallShape {
            choice: ToolChoice::Required,
            ..CallShape::default()
        };
        let mut retried = model(&script, &tools, shape.clone());
        let messages = [ChatMessage::text("user", "Weather in Paris?")];
        let policy = toolgram_retry::RetryPolicy {
            max_attempts: 3,
            consecutive_blocked: 3,
        };
        let outcome = toolgram_retry::run(&mut retried, &tools, &shape.choice, &messages, policy)
            .unwrap_or_else(|_| panic!("the third attempt calls"));
        assert_eq!(outcome.attempts, 3);
        assert_eq!(script.sent.borrow().len(), 3);
        assert_eq!(
            retried.plans_made(),
            1,
            "the GBNF was compiled again for an attempt"
        );
        // The plan's two shapes: two plans for the two requests of one attempt.
        let script = script_two();
        let mut planned = model(&script, &tools, planned_shape());
        let _ = planned.attempt(&messages);
        assert_eq!(planned.plans_made(), 2);
    }

    /// What a live reader saw: one string per attempt.
    struct Seen<'s>(&'s RefCell<Vec<String>>);

    impl LiveReply for Seen<'_> {
        fn started(&mut self) {
            self.0.borrow_mut().push(String::new());
        }
        fn text(&mut self, delta: &str) {
            if let Some(last) = self.0.borrow_mut().last_mut() {
                last.push_str(delta);
            }
        }
    }

    #[test]
    fn a_reply_one_request_makes_streams_live_and_a_plans_two_requests_do_not() {
        let tools = weather();
        let messages = [ChatMessage::text("user", "Weather in Paris?")];
        let seen = RefCell::new(Vec::new());
        let script = script(vec![PARIS]);
        let one = CallShape {
            choice: ToolChoice::Required,
            ..CallShape::default()
        };
        let mut live = ProviderModel {
            live: Some(Box::new(Seen(&seen))),
            ..model(&script, &tools, one)
        };
        let reply = live.attempt(&messages).unwrap_or_else(|_| panic!("a call"));
        drop(live);
        assert_eq!(reply.tool_calls[0].arguments["city"], "Paris");
        assert_eq!(*seen.borrow(), vec![PARIS.to_owned()]);
        assert_eq!(
            script.sent.borrow()[0]["stream"],
            true,
            "a live reply is asked for as a stream"
        );
        // Under the plan the first reply may be replaced by the counted one: nothing live.
        let seen = RefCell::new(Vec::new());
        let script = script_two();
        let mut planned = ProviderModel {
            live: Some(Box::new(Seen(&seen))),
            ..model(&script, &tools, planned_shape())
        };
        let _ = planned.attempt(&messages);
        drop(planned);
        assert!(seen.borrow().is_empty(), "{:?}", seen.borrow());
    }

    fn script_two() -> Scripted {
        script(vec![PARIS, TWO])
    }
}
