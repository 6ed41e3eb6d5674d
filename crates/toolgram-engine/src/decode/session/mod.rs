//! The decode loop: one sequence of a llama.cpp context (a lane of a [`crate::Batch`], shared
//! with concurrent sessions or alone), an llguidance mask per token, our own sample/accept
//! step, fast-forward of forced tokens, and KV-cache reuse of the longest common prompt prefix
//! between calls, and the reading of a finished reply. Beside it: [`plan`] (the plan's decodes:
//! call or text first under [`Plan::Calls`], the count, a plan line of one call or none taken
//! out of the context, the count bias's guard), [`request`] (what a session is asked and
//! answers) and [`sampling`] (the settings and the levers' defaults).
//!
//! End-of-generation can only be sampled where the grammar accepts (it is in the mask only
//! then); a token the matcher rejects is an error value, never an abort; reaching the token
//! limit inside a call is [`EngineError::Truncated`]. Buffers are allocated before the loop;
//! the one per-step allocation left is the mask bitset llguidance returns. A
//! [`DecodeObserver`] sees each step's bytes as they are decoded (streaming); this module
//! must not interpret them.

mod plan;
mod request;
mod sampling;

pub use request::{CallGrammar, CallRequest, CallResponse, DecodeObserver, Timings, TruncatedCall};
pub use sampling::{AGENT_CALL_BIAS, AGENT_POOL, ONE_TOOL_COUNT_BIAS, PLAN_CALL_BIAS, Sampling};
pub(crate) use sampling::{Draw, Levers};

use crate::batch::{BATCH, Batch, LaneHandle};
use crate::call_bias::CallChoice;
use crate::compiled_call::CompiledCall;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::loop_guard::{CutCall, LoopGuard, Reading};
use crate::prefix::{self, PrefixStore};
use crate::sample::{Bias, Rng, pick_nucleus};
use crate::text_guard::{RepeatedText, TextGuard, whole_chars};
use crate::think::ThinkWatch;
use llama_cpp_2::token::LlamaToken;
use llguidance::Matcher;
use llguidance::toktrie::SimpleVob;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use toolgram_core::compile::{self, CompiledGrammar, PLAN_PREFIX};
pub use toolgram_core::define::reply::FinishReason;
use toolgram_core::define::request::{Mode, Plan, Think};
use toolgram_core::parse::lenient::{
    self, LenientOptions, LenientOutput, ReasoningFormat, SyntaxChoice,
};
use toolgram_core::parse::{self, ParsedOutput};
use toolgram_core::syntax::Reasoning;
use toolgram_core::syntax::prompt;
use toolgram_core::validate::validate_call;
use toolgram_core::{CallSyntax, ChatMessage, ParseError, ToolCall, ToolChoice, ToolSet};

/// The engine settings that shape a saved KV state, for naming stored prefixes: the batch
/// size and the context's `lanes` (one KV stream each: llama.cpp refuses a state saved
/// with another stream count, so a server with `--parallel 2` and `call` keep apart).
pub fn state_tag(lanes: usize) -> String {
    format!("b{BATCH}-s{lanes}")
}

/// One sequence of a llama.cpp context over an [`Engine`], keeping the evaluated tokens for
/// prefix reuse.
pub struct Session<'e> {
    engine: &'e Engine,
    lane: LaneHandle<'e>,
    /// The logits of the last decoded token (swapped in by the batch).
    logits: Vec<f32>,
    cached: Vec<LlamaToken>,
    pub(crate) text: Vec<u8>,
    scratch: Vec<(u32, f64)>,
    observer: Option<Box<dyn DecodeObserver + 'e>>,
    store: Option<Arc<dyn PrefixStore>>,
    /// The last reply's [`CallResponse::call_margin`].
    call_margin: Option<f32>,
    /// The last reply's [`CallResponse::count_margin`].
    count_margin: Option<f32>,
    /// The last reply's [`CallResponse::repeated_text`].
    repeated_text: Option<RepeatedText>,
}

static CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh call id (`call_…`), unique within the process.
pub fn call_id() -> String {
    let n = CALL_COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut z =
        t ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(std::process::id()).rotate_left(32);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^= z >> 27;
    format!("call_{z:016x}{:08x}", n as u32)
}

impl Engine {
    /// Open a session on a context of its own (a batch of one lane).
    pub fn session(&self) -> Result<Session<'_>, EngineError> {
        self.batch(1)?.session()
    }
}

impl<'e> Batch<'e> {
    /// A session on a free lane of this batch; [`EngineError::Busy`] when every lane is
    /// taken. The lane is freed (and its KV cells cleared) when the session is dropped.
    pub fn session(self: &Arc<Self>) -> Result<Session<'e>, EngineError> {
        let lane = self.open_lane()?;
        let engine = self.engine();
        Ok(Session {
            engine,
            lane,
            logits: vec![0.0; engine.tok.pieces.len()],
            cached: Vec::new(),
            text: Vec::new(),
            scratch: Vec::new(),
            observer: None,
            store: None,
            call_margin: None,
            count_margin: None,
            repeated_text: None,
        })
    }
}

impl<'e> Session<'e> {
    /// Watch every generation on this session (`None`: stop watching).
    pub fn set_observer(&mut self, observer: Option<Box<dyn DecodeObserver + 'e>>) {
        self.observer = observer;
    }

    /// Keep evaluated prompt prefixes in `store` (`None`: only in this session): a call finds
    /// the longest stored prefix of its prompt before evaluating it, and stores its own
    /// reusable prefix (everything before the last message) once evaluated.
    pub fn set_prefix_store(&mut self, store: Option<Arc<dyn PrefixStore>>) {
        self.store = store;
    }

    /// Prompt tokens held in the KV cache from earlier calls.
    pub fn cached_tokens(&self) -> usize {
        self.cached.len()
    }

    /// Time a prompt of [`crate::speed::PROMPT_TOKENS`] tokens and [`crate::speed::STEPS`]
    /// decode steps on this lane, then forget them (the cache is cleared before and after).
    pub fn measure_speed(&mut self) -> Result<crate::speed::Speed, EngineError> {
        use crate::speed::{PROMPT_TOKENS, STEPS, Speed};
        let text = "The quick brown fox jumps over the lazy dog, and the dog sleeps on. ";
        let mut tokens = self
            .engine
            .client
            .tokenize(&self.engine.model, &text.repeat(64));
        tokens.truncate(PROMPT_TOKENS + STEPS);
        if tokens.len() < PROMPT_TOKENS + STEPS {
            return Err(EngineError::Decode("too few tokens to time".into()));
        }
        self.clear_cache();
        let t0 = Instant::now();
        let timed = self
            .evaluate(&tokens[..PROMPT_TOKENS], true)
            .and_then(|()| {
                let prefill = t0.elapsed().as_secs_f64();
                let t1 = Instant::now();
                for t in &tokens[PROMPT_TOKENS..] {
                    self.decode(std::slice::from_ref(t), true)?;
                }
                Ok(Speed {
                    prefill_per_s: PROMPT_TOKENS as f64 / prefill.max(1e-6),
                    decode_per_s: STEPS as f64 / t1.elapsed().as_secs_f64().max(1e-6),
                })
            });
        self.clear_cache();
        timed
    }

    /// Forget the KV cache (the next call evaluates its whole prompt).
    pub fn clear_cache(&mut self) {
        self.lane.with_ctx(|ctx, seq| {
            let _ = ctx.clear_kv_cache_seq(Some(seq), None, None);
        });
        self.cached.clear();
    }

    /// Render, tokenize and run one request, returning its validated calls; an invalid call
    /// is [`EngineError::InvalidArguments`] (the retry loop in `toolgram-retry` feeds such
    /// errors back to the model instead, through [`Session::reply`]).
    pub fn call(&mut self, req: &CallRequest<'_>) -> Result<CallResponse, EngineError> {
        let reply = self.reply(req)?;
        for c in &reply.tool_calls {
            validate_call(req.tools, c).map_err(EngineError::InvalidArguments)?;
        }
        Ok(reply)
    }

    /// Run one request and parse the reply, without validating the arguments. Under
    /// [`Mode::Prompt`] nothing constrains decoding: the tools and example calls go into the
    /// system prompt (as they do in any mode with [`CallRequest::few_shot`]) and a reply that
    /// cannot be read as calls is [`EngineError::Unreadable`].
    pub fn reply(&mut self, req: &CallRequest<'_>) -> Result<CallResponse, EngineError> {
        let out = self.reply_on_lane(req);
        self.pause();
        out
    }

    #[allow(
        clippy::too_many_lines,
        reason = "one request on a lane, compile to parse, in the order it happens"
    )]
    fn reply_on_lane(&mut self, req: &CallRequest<'_>) -> Result<CallResponse, EngineError> {
        let engine = self.engine;
        let t_grammar = Instant::now();
        let shape = req.shape();
        let prompted = shape.mode == Mode::Prompt;
        let unconstrained = req.sampling.unconstrained || prompted;
        // The grammar is built before the prompt is evaluated, so a refusal costs nothing.
        let made_here;
        let call = match &req.grammar {
            CallGrammar::Compiled(c) => Some(*c),
            CallGrammar::Shape(_) if unconstrained => None,
            CallGrammar::Shape(shape) => {
                made_here = engine.grammars.compile_call(req.tools, shape)?;
                Some(&made_here)
            }
        };
        let (compiled, matcher) = match call {
            Some(c) => (
                Cow::Borrowed(c.plan()),
                (!unconstrained).then(|| c.matcher()).transpose()?,
            ),
            None => {
                let opts = engine.grammars.call_options(shape);
                let plan = compile::compile(
                    req.tools,
                    &shape.choice,
                    shape.parallel,
                    engine.syntax,
                    &opts,
                )?;
                (Cow::Owned(plan), None)
            }
        };
        let decider = call
            .filter(|_| !unconstrained)
            .and_then(CompiledCall::decider);
        let grammar_ms = t_grammar.elapsed().as_secs_f64() * 1e3;
        let t_template = Instant::now();
        // Client text is escaped before toolgram's instructions join it: their example calls
        // keep their markers.
        let escaped = engine.client.escape_messages(req.messages);
        let messages = if prompted || req.few_shot {
            with_instructions(&escaped, req, engine.syntax, &engine.client)
        } else {
            escaped
        };
        let tokens = engine.prompt_escaped(&messages, req.tools)?;
        let n_ctx = engine.n_ctx as usize;
        if tokens.len() >= n_ctx {
            return Err(EngineError::ContextOverflow {
                prompt_tokens: tokens.len(),
                n_ctx,
            });
        }
        let keep = self.reusable_prefix(&messages, req.tools, &tokens);
        let mut timings = Timings {
            grammar_ms,
            template_ms: t_template.elapsed().as_secs_f64() * 1e3,
            ..Timings::default()
        };
        self.prefill_timed(&tokens, keep, &mut timings)?;
        let budget = req.sampling.max_tokens.min(n_ctx - tokens.len());
        let t1 = Instant::now();
        let decoding = Decoding {
            req,
            choice: &compiled.choice,
            budget,
            constrained: !unconstrained,
            planned: compiled.planned,
        };
        let outcome = match (decider, matcher) {
            (Some(d), Some(planned)) => self.decide_then_plan(&decoding, d, planned, &mut timings),
            (None, Some(planned))
                if compiled.planned
                    && req
                        .sampling
                        .counts_up_by_default(req.tools.tools().len(), shape.plan) =>
            {
                self.planned_or_one(&decoding, planned, &mut timings)
            }
            (_, matcher) => {
                let levers = decoding.levers();
                self.decode_reply(&decoding, matcher, levers, &mut timings)
            }
        };
        timings.generate_ms = t1.elapsed().as_secs_f64() * 1e3;
        let (completion_tokens, hit_limit, cut_call) = match outcome {
            Ok(done) => done,
            Err(e) => return self.cut_reply(req, &compiled, e, tokens.len(), timings),
        };
        let raw = String::from_utf8_lossy(&self.text).into_owned();
        tracing::debug!(raw = %raw, "generated");
        let (reasoning_content, plan, answer) = with_plan(
            parse::split_reasoning(&raw, shape.think, engine.syntax.reasoning()),
            shape.plan.is_on(),
        );
        let parsed = if req.sampling.unconstrained {
            ParsedOutput {
                content: Some(answer.to_owned()),
                tool_calls: Vec::new(),
            }
        } else if prompted {
            read_free_text(answer, engine.syntax, req.tools)?
        } else {
            let read = Read {
                syntax: engine.syntax,
                compiled: &compiled,
                tools: req.tools,
                budget,
                hit_limit,
            };
            let parsed = if shape.answer.is_some() {
                read.answer_or_calls(answer)
            } else {
                read.calls(answer)
            };
            match parsed {
                Ok(parsed) => parsed,
                Err(e) => return self.cut_reply(req, &compiled, e, tokens.len(), timings),
            }
        };
        let mut calls = parsed.tool_calls;
        for c in &mut calls {
            c.id = call_id();
        }
        let finish_reason = if !calls.is_empty() {
            FinishReason::ToolCalls
        } else if hit_limit {
            FinishReason::Length
        } else {
            FinishReason::Stop
        };
        Ok(CallResponse {
            reasoning_content,
            plan,
            content: parsed.content,
            tool_calls: calls,
            finish_reason,
            prompt_tokens: tokens.len(),
            completion_tokens,
            raw,
            timings,
            mode: shape.mode,
            deferred: compiled.deferred.clone(),
            ignored: compiled.ignored.clone(),
            truncated_call: None,
            cut_call,
            repeated_text: self.repeated_text.clone(),
            call_margin: self.call_margin,
            count_margin: self.count_margin,
        })
    }

    /// The reply to `err`, a failed generation: when the token limit cut it inside a call,
    /// the calls completed before the cut are kept (the grammar made each whole, so each is a
    /// call the model meant), the one in progress is reported as [`TruncatedCall`], and the
    /// reply ends with `Length`; with no complete call it stays [`EngineError::Truncated`], now
    /// with its usage. A run cancelled while decoding gets its usage too (a server counts what
    /// it spent on a client that went away). Any other error is returned as it is.
    fn cut_reply(
        &self,
        req: &CallRequest<'_>,
        compiled: &CompiledGrammar,
        err: EngineError,
        prompt_tokens: usize,
        timings: Timings,
    ) -> Result<CallResponse, EngineError> {
        let usage = |completion_tokens| toolgram_retry::Usage {
            prompt_tokens,
            completion_tokens,
            cached_prompt_tokens: prompt_tokens.saturating_sub(timings.prompt_evaluated),
        };
        let (partial, max_tokens, repeated) = match err {
            EngineError::Truncated {
                partial,
                max_tokens,
                repeated,
                ..
            } => (partial, max_tokens, repeated),
            EngineError::Cancelled {
                usage: Some(u),
                partial,
            } => {
                return Err(EngineError::Cancelled {
                    usage: Some(usage(u.completion_tokens)),
                    partial,
                });
            }
            err => return Err(err),
        };
        let engine = self.engine;
        let shape = req.shape();
        let usage = usage(max_tokens);
        let raw = String::from_utf8_lossy(&self.text).into_owned();
        let (reasoning_content, plan, answer) = with_plan(
            parse::split_reasoning(&raw, shape.think, engine.syntax.reasoning()),
            shape.plan.is_on(),
        );
        let read = read_leniently(answer, engine.syntax, req.tools, true)
            .ok()
            .filter(|o| {
                // Every complete call must be one the grammar allowed.
                o.tool_calls.iter().filter(|c| !c.partial).all(|c| {
                    req.tools
                        .position(&c.name)
                        .is_some_and(|i| compiled.callable.contains(&i))
                })
            });
        let Some(read) = read.filter(|o| o.tool_calls.iter().any(|c| !c.partial)) else {
            return Err(EngineError::Truncated {
                partial,
                max_tokens,
                repeated,
                usage: Some(usage),
            });
        };
        let (complete, in_progress): (Vec<_>, Vec<_>) =
            read.tool_calls.into_iter().partition(|c| !c.partial);
        Ok(CallResponse {
            reasoning_content,
            plan,
            content: Some(read.content).filter(|c| !c.is_empty()),
            tool_calls: complete
                .into_iter()
                .map(|c| ToolCall {
                    id: call_id(),
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            finish_reason: FinishReason::Length,
            prompt_tokens,
            completion_tokens: max_tokens,
            raw,
            timings,
            mode: shape.mode,
            deferred: compiled.deferred.clone(),
            ignored: compiled.ignored.clone(),
            truncated_call: Some(in_progress.into_iter().next().map_or_else(
                || TruncatedCall {
                    name: String::new(),
                    partial: partial.clone(),
                },
                |c| TruncatedCall {
                    name: c.name,
                    partial: c.partial_arguments.unwrap_or_default(),
                },
            )),
            cut_call: None,
            repeated_text: repeated,
            call_margin: self.call_margin,
            count_margin: self.count_margin,
        })
    }

    /// Where the reusable prefix of `tokens` ends (0 without a prefix store): the prompt
    /// rendered with the last message's text replaced parts from it there. `messages` are the
    /// escaped ones `tokens` were made from.
    fn reusable_prefix(
        &self,
        messages: &[ChatMessage],
        tools: &ToolSet,
        tokens: &[LlamaToken],
    ) -> usize {
        if self.store.is_none() {
            return 0;
        }
        let engine = self.engine;
        prefix::with_last_replaced(messages)
            .and_then(|probe| engine.prompt_escaped(&probe, tools).ok())
            .map_or(0, |probe| prefix::common_prefix(&probe, tokens))
    }

    /// Evaluate the prompt `tokens` (see [`Session::prefill`]), recording tokens evaluated
    /// and time in `timings`.
    pub(crate) fn prefill_timed(
        &mut self,
        tokens: &[LlamaToken],
        keep: usize,
        timings: &mut Timings,
    ) -> Result<(), EngineError> {
        let t0 = Instant::now();
        timings.prompt_evaluated = self.prefill(tokens, keep)?;
        timings.prompt_ms = t0.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// Evaluate `tokens`, reusing the cached prefix (or a longer stored one); the first
    /// `keep` tokens are stored once evaluated. Returns how many tokens were evaluated.
    pub(crate) fn prefill(
        &mut self,
        tokens: &[LlamaToken],
        keep: usize,
    ) -> Result<usize, EngineError> {
        let mut common = prefix::common_prefix(&self.cached, tokens);
        if common == tokens.len() {
            common = common.saturating_sub(1);
        }
        // The last prompt token is always evaluated: its logits start generation.
        let keep = keep.min(tokens.len().saturating_sub(1));
        let store = self.store.clone();
        if let Some(store) = &store
            && keep > common
        {
            let loaded = self
                .lane
                .with_ctx(|ctx, seq| prefix::load(ctx, seq, store.as_ref(), tokens, keep, common));
            match loaded {
                prefix::Loaded::Nothing => {}
                prefix::Loaded::Tokens(loaded) => {
                    common = loaded.len();
                    self.cached = loaded;
                }
                prefix::Loaded::Cleared => {
                    self.cached.clear();
                    common = 0;
                }
            }
        }
        if common < self.cached.len() {
            let from = u32::try_from(common).ok();
            let cleared = self.lane.with_ctx(|ctx, seq| {
                let cut = ctx.clear_kv_cache_seq(Some(seq), from, None);
                if !cut.unwrap_or(false) {
                    let _ = ctx.clear_kv_cache_seq(Some(seq), None, None);
                    return false;
                }
                true
            });
            if !cleared {
                common = 0;
            }
        }
        self.cached.truncate(common);
        let evaluated = tokens.len() - common;
        if let Some(store) = &store
            && keep > common
        {
            let evaluated = self.evaluate(&tokens[common..keep], false);
            // A prefill cut short (its deadline, its client gone) keeps what it evaluated, so
            // the request's retry resumes from there rather than from the start.
            let cached = &self.cached;
            // Nothing is kept of a prefill a lost worker cut: its KV cells there are gone.
            let workers = self.lane.workers();
            if (evaluated.is_ok() || cached.len() > common) && workers.check().is_ok() {
                self.lane.with_ctx(|ctx, seq| {
                    prefix::save(ctx, seq, store.as_ref(), cached, workers);
                });
            }
            evaluated?;
            common = keep;
        }
        self.evaluate(&tokens[common..], true)?;
        Ok(evaluated)
    }

    /// Append `toks` in batches; logits for the last one when `logits`.
    fn evaluate(&mut self, toks: &[LlamaToken], logits: bool) -> Result<(), EngineError> {
        for (ci, chunk) in toks.chunks(BATCH).enumerate() {
            self.check_cancelled()?;
            let last_chunk = (ci + 1) * BATCH >= toks.len();
            self.decode(chunk, logits && last_chunk)?;
        }
        Ok(())
    }

    /// Append `toks` to this session's sequence (decoded with the other lanes' pending
    /// tokens); logits for the last one when `logits`.
    fn decode(&mut self, toks: &[LlamaToken], logits: bool) -> Result<(), EngineError> {
        self.lane
            .decode(toks, self.cached.len(), logits, &mut self.logits)?;
        self.cached.extend_from_slice(toks);
        Ok(())
    }

    /// Append a generation step and let it decode; its logits are fetched by
    /// [`Self::fetch_logits`], so the next mask can be computed while a GPU runs the step.
    fn submit_step(&mut self, toks: &[LlamaToken]) -> Result<(), EngineError> {
        self.lane.submit(toks, self.cached.len(), true)?;
        self.cached.extend_from_slice(toks);
        Ok(())
    }

    /// Decode one reply of `d.req` under `matcher` and `levers`, with its think watch and,
    /// where several calls may be made, its loop guard: (tokens, hit the limit, a cut call).
    fn decode_reply(
        &mut self,
        d: &Decoding<'_, '_>,
        matcher: Option<Matcher>,
        levers: Levers,
        timings: &mut Timings,
    ) -> Result<Decoded, EngineError> {
        let req = d.req;
        let shape = req.shape();
        let sampling = &req.sampling;
        let watch = (shape.think != Think::Off && d.constrained).then(|| {
            ThinkWatch::new(
                sampling.think_budget.unwrap_or(sampling.max_tokens * 3 / 4),
                self.engine.syntax.reasoning(),
            )
        });
        // Only a reply that may hold several calls can loop on one.
        let mut guard = shape.parallel.then(|| {
            let reading = Reading {
                syntax: self.engine.syntax,
                tools: req.tools,
                choice: d.choice,
                think: shape.think,
            };
            LoopGuard::new(reading, req.messages, sampling.cut_runaways)
        });
        let (n, hit) = self.generate(
            matcher,
            Draw { sampling, levers },
            watch,
            guard.as_mut(),
            d.budget,
            timings,
        )?;
        Ok((n, hit, guard.and_then(|g| g.cut)))
    }

    /// Take the reply so far out of the context, keeping its text, and go on from the prompt's
    /// last token with `rest` (tokens the grammar forced after what is taken out): the next
    /// token is chosen as if the reply had not started. See [`after_plan_of_one`].
    fn unsee_reply(&mut self, reply_start: usize, rest: &[LlamaToken]) -> Result<(), EngineError> {
        let last = reply_start
            .checked_sub(1)
            .and_then(|i| self.cached.get(i).copied())
            .ok_or_else(|| EngineError::Decode("a reply without a prompt before it".into()))?;
        let from = u32::try_from(reply_start - 1)
            .map_err(|_| EngineError::Decode("the context is too long to cut".into()))?;
        let cut = self
            .lane
            .with_ctx(|ctx, seq| ctx.clear_kv_cache_seq(Some(seq), Some(from), None));
        if !cut.unwrap_or(false) {
            return Err(EngineError::Decode(
                "llama.cpp could not take the reply out of the context".into(),
            ));
        }
        self.cached.truncate(reply_start - 1);
        let mut toks = Vec::with_capacity(rest.len() + 1);
        toks.push(last);
        toks.extend_from_slice(rest);
        self.decode(&toks, true)
    }

    /// The logits of the last submitted step (waiting for its forward pass to end).
    fn fetch_logits(&mut self) -> Result<(), EngineError> {
        self.lane.take_logits(&mut self.logits)
    }

    /// Sample up to `budget` tokens under the grammar; returns (tokens generated, hit the limit).
    /// With a `guard` (calls of a reply that may hold several), a runaway call ends it (see
    /// `loop_guard`); under [`Sampling::stop_repeated_text`], text that repeats itself ends it
    /// where the grammar accepts, and a reply the grammar cannot end that repeats itself past
    /// the higher bar ends as at the limit (see `text_guard`).
    #[allow(
        clippy::too_many_lines,
        reason = "the decode loop: one step top to bottom, its state in locals"
    )]
    pub(crate) fn generate(
        &mut self,
        mut matcher: Option<Matcher>,
        draw: Draw<'_>,
        mut watch: Option<ThinkWatch>,
        mut guard: Option<&mut LoopGuard<'_>>,
        budget: usize,
        timings: &mut Timings,
    ) -> Result<(usize, bool), EngineError> {
        let engine = self.engine;
        let Draw {
            sampling: s,
            levers,
        } = draw;
        let reasoning = watch
            .as_ref()
            .map_or(Reasoning::THINK, ThinkWatch::reasoning);
        let think_close = self.think_close(reasoning);
        let think_close_text = reasoning.close_text();
        // Unconstrained runs (prompt mode, bench baselines) skip llguidance entirely.
        let everything = matcher
            .is_none()
            .then(|| SimpleVob::alloc_ones(engine.tok.pieces.len()));
        let seed = s.seed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
        let mut rng = Rng::new(seed);
        let bias = Bias::new(&s.logit_bias, engine.tok.pieces.len())?;
        let mut choice = CallChoice::new(
            &engine.call_starts,
            levers.plan.is_on(),
            levers.call_bias,
            levers.count_bias,
        );
        // Where the reply starts in the context; a plan of one call or none leaves it (below).
        let reply_start = self.cached.len();
        let mut plan_open = levers.plan.is_on();
        self.call_margin = None;
        self.count_margin = None;
        self.repeated_text = None;
        // Free text that repeats itself ends where the grammar may end it; unconstrained
        // runs (baselines) are left as the model writes them.
        let mut text_guard = (s.stop_repeated_text && matcher.is_some()).then(TextGuard::new);
        self.text.clear();
        if let Some(o) = self.observer.as_mut() {
            o.started();
        }
        if s.temperature > 0.0 && s.top_p < 1.0 {
            self.scratch.reserve(engine.tok.pieces.len());
        }
        timings.mask_us.clear();
        timings.mask_us.reserve(budget);
        let mut produced = 0usize;
        let mut ff = Vec::with_capacity(64);
        let mut step = Vec::with_capacity(65);
        // The mask computed while the last step decoded (see `submit_step`).
        let mut next_mask = None;
        while produced < budget {
            if self.check_cancelled().is_err() {
                // The prompt's share is added by `cut_reply`.
                return Err(EngineError::Cancelled {
                    usage: Some(toolgram_retry::Usage {
                        completion_tokens: produced,
                        ..Default::default()
                    }),
                    partial: String::from_utf8_lossy(&self.text).into_owned(),
                });
            }
            let computed;
            let mask = match (&mut matcher, &everything) {
                (Some(m), _) => {
                    if m.is_stopped() {
                        return Ok((produced, false));
                    }
                    computed = match next_mask.take() {
                        Some(mask) => mask,
                        None => timed_mask(m, timings)?,
                    };
                    let accepting = || engine.tok.eog().iter().any(|&t| computed.is_allowed(t));
                    // `ff` still holds the tokens the last step forced.
                    if let Some(g) = guard.as_mut()
                        && let Some(end) = g.stop_at(&self.text, accepting(), !ff.is_empty())
                    {
                        tracing::debug!("the reply runs away from its calls: stopped (loop guard)");
                        self.text.truncate(end);
                        return Ok((produced, false));
                    }
                    if let Some(tg) = text_guard.as_ref()
                        && let Some((period, repeated)) = tg.runaway()
                    {
                        let ends = accepting();
                        // An open think block is closed by its budget (`ThinkWatch`), not cut.
                        let thinking = watch.as_ref().is_some_and(ThinkWatch::inside);
                        if ends || (!thinking && TextGuard::hopeless(period, repeated)) {
                            let span: Vec<u8> = tg
                                .span(period, repeated)
                                .flat_map(|t| engine.tok.piece(t))
                                .copied()
                                .collect();
                            let span = whole_chars(&span);
                            let copies = 1 + repeated / period;
                            if ends {
                                tracing::info!(span = %span, copies, "the reply's text repeats itself: stopped (text guard)");
                            } else {
                                tracing::info!(span = %span, copies, "the reply repeats itself where the grammar cannot end it: cut as at its token limit (text guard)");
                            }
                            self.repeated_text = Some(RepeatedText { span, copies });
                            if ends {
                                return Ok((produced, false));
                            }
                            break;
                        }
                    }
                    &computed
                }
                (None, Some(all)) => all,
                (None, None) => {
                    return Err(EngineError::Constraint(
                        "no constraint and no vocabulary".into(),
                    ));
                }
            };
            choice.at_step(mask, &self.text, &mut self.logits);
            if self.call_margin.is_none()
                && let Some(margin) = choice.margin
            {
                tracing::debug!(margin, bias = levers.call_bias, "the call-or-text choice");
                self.call_margin = Some(margin);
            }
            if self.count_margin.is_none()
                && let Some(margin) = choice.count_margin
            {
                tracing::debug!(margin, bias = levers.count_bias, "the plan's count");
                self.count_margin = Some(margin);
            }
            let logits = self.logits.as_slice();
            let sampling = (&bias, s.temperature, s.top_p);
            let token = pick_nucleus(logits, mask, sampling, &mut rng, &mut self.scratch)
                .ok_or_else(|| {
                    EngineError::Constraint("the grammar allows no token here".into())
                })?;
            if engine.tok.eog().contains(&token) {
                return Ok((produced, false));
            }
            step.clear();
            step.push(LlamaToken::new(token as i32));
            ff.clear();
            if let Some(m) = matcher.as_mut() {
                m.consume_token(token).map_err(|e| matcher_err(m, e))?;
                if !m.is_stopped() && !s.no_fast_forward {
                    ff.extend(
                        m.compute_ff_tokens()
                            .into_iter()
                            .take(budget - produced - 1),
                    );
                    if !ff.is_empty() {
                        m.consume_tokens(&ff).map_err(|e| matcher_err(m, e))?;
                        timings.forced_tokens += ff.len();
                    }
                }
            }
            step.extend(ff.iter().map(|&t| LlamaToken::new(t as i32)));
            if let Some(tg) = text_guard.as_mut() {
                tg.push(token);
                ff.iter().for_each(|&t| tg.push(t));
            }
            let step_start = self.text.len();
            for t in &step {
                self.text.extend_from_slice(engine.tok.piece(t.0 as u32));
            }
            produced += step.len();
            if let Some(cut) = stop_at(&self.text, step_start, &s.stop)
                && matcher
                    .as_mut()
                    .is_none_or(|m| m.is_accepting().unwrap_or(false))
            {
                self.text.truncate(cut);
                if let Some(o) = self.observer.as_mut() {
                    o.piece(&self.text[step_start.min(cut)..cut]);
                }
                return Ok((produced, false));
            }
            if let Some(o) = self.observer.as_mut() {
                o.piece(&self.text[step_start..]);
            }
            if let (Some(w), Some(m)) = (watch.as_mut(), matcher.as_mut())
                && w.must_close(&self.text, produced)
            {
                m.consume_tokens(&think_close)
                    .map_err(|e| matcher_err(m, e))?;
                if let Some(tg) = text_guard.as_mut() {
                    think_close.iter().for_each(|&t| tg.push(t));
                }
                timings.forced_tokens += think_close.len();
                produced += think_close.len();
                step.extend(think_close.iter().map(|&t| LlamaToken::new(t as i32)));
                self.text.extend_from_slice(think_close_text.as_bytes());
                if let Some(o) = self.observer.as_mut() {
                    o.piece(think_close_text.as_bytes());
                }
            }
            if matcher.as_ref().is_some_and(Matcher::is_stopped) {
                return Ok((produced, false));
            }
            if plan_open
                && let Some(rest) = after_plan_of_one(&self.text, step_start, &step, engine)
            {
                plan_open = false;
                let td = Instant::now();
                self.unsee_reply(reply_start, &step[rest..])?;
                timings.decode_ms += td.elapsed().as_secs_f64() * 1e3;
                continue;
            }
            plan_open = plan_open && self.text.len() < PLAN_PREFIX.len() + 2;
            if produced < budget {
                let toks = std::mem::take(&mut step);
                let td = Instant::now();
                let r = self.submit_step(&toks);
                timings.decode_ms += td.elapsed().as_secs_f64() * 1e3;
                step = toks;
                r?;
                // The next mask depends on the grammar alone: on a GPU it overlaps the
                // forward pass, which the logits below wait for.
                if let Some(m) = matcher.as_mut().filter(|m| !m.is_stopped()) {
                    next_mask = Some(timed_mask(m, timings)?);
                }
                let td = Instant::now();
                let fetched = self.fetch_logits();
                timings.decode_ms += td.elapsed().as_secs_f64() * 1e3;
                fetched?;
            }
        }
        if let Some(m) = matcher.as_mut()
            && !m.is_accepting().unwrap_or(false)
        {
            let partial = String::from_utf8_lossy(&self.text).into_owned();
            return Err(EngineError::Truncated {
                partial,
                max_tokens: produced,
                repeated: self.repeated_text.clone(),
                usage: None,
            });
        }
        Ok((produced, true))
    }
}

/// What one request's decodes share: the request, its grammar's tool choice, the token budget,
/// and whether a grammar constrains them.
struct Decoding<'r, 'a> {
    req: &'r CallRequest<'a>,
    choice: &'r ToolChoice,
    budget: usize,
    constrained: bool,
    /// Whether the grammar opens the reply with a plan line (a plan asked for where only one
    /// call may be made has none: the call bias then acts at the call opener).
    planned: bool,
}

impl Decoding<'_, '_> {
    /// The request's levers settled for its pool: a plan asked for where only one call may be
    /// made has no plan line.
    fn levers(&self) -> Levers {
        let plan = if self.planned {
            self.req.shape().plan
        } else {
            Plan::Off
        };
        Levers::settled(&self.req.sampling, self.req.tools.tools().len(), plan)
    }
}

/// A decode's tokens, whether the limit ended it, and the runaway call its guard cut.
type Decoded = (usize, bool, Option<CutCall>);

/// Where a plan of one call or none ends in this step (`step`, whose text starts at
/// `step_start` of the reply `text`): the index of the step's first token after the plan line,
/// when the reply so far is that line (a count of 0 or 1 and its newline) and a token ends
/// exactly there; else `None`.
///
/// Such a plan is taken out of the context ([`Session::unsee_reply`]): its count is what the
/// plan is for, and the one call (or the text) is then written from the prompt alone. With
/// the line in view the default model chose another tool than it chooses without a plan
/// (BFCL's `multiple` through BFCL's harness: 10 of the 23 items the plan lost were a wrong
/// tool after a count of 1). A count of 2 or more stays in view: the model needs
/// it to write its second call.
fn after_plan_of_one(
    text: &[u8],
    step_start: usize,
    step: &[LlamaToken],
    engine: &Engine,
) -> Option<usize> {
    let count = text.strip_prefix(PLAN_PREFIX.as_bytes())?;
    let line = PLAN_PREFIX.len() + 2;
    if !(count.starts_with(b"0\n") || count.starts_with(b"1\n")) || step_start > line {
        return None;
    }
    let mut at = step_start;
    for (i, t) in step.iter().enumerate() {
        if at == line {
            return Some(i);
        }
        at += engine.tok.piece(t.0 as u32).len();
    }
    (at == line).then_some(step.len())
}

/// A planned reply's plan line (`Number of tool calls needed: 2`) taken from its answer: it is
/// the model's own account of what it will do, not the answer.
fn with_plan(
    (reasoning, answer): (Option<String>, &str),
    plan: bool,
) -> (Option<String>, Option<String>, &str) {
    match parse::split_plan(answer) {
        (Some(line), rest) if plan => (reasoning, Some(line), rest),
        _ => (reasoning, None, answer),
    }
}

/// The matcher's next mask, its time recorded.
fn timed_mask(m: &mut Matcher, timings: &mut Timings) -> Result<SimpleVob, EngineError> {
    let tm = Instant::now();
    let mask = m.compute_mask().map_err(|e| matcher_err(m, e))?;
    timings
        .mask_us
        .push(u32::try_from(tm.elapsed().as_micros()).unwrap_or(u32::MAX));
    Ok(mask)
}

impl<'e> Session<'e> {
    /// The engine this session runs on.
    pub fn engine(&self) -> &'e Engine {
        self.engine
    }

    /// This session stops generating: concurrent lanes no longer wait for it.
    pub(crate) fn pause(&self) {
        self.lane.pause();
    }

    fn check_cancelled(&self) -> Result<(), EngineError> {
        match &self.observer {
            Some(o) if o.cancelled() => Err(EngineError::Cancelled {
                usage: None,
                partial: String::new(),
            }),
            _ => Ok(()),
        }
    }

    /// The tokens of a reasoning block's closing markers: each marker's special token, or
    /// its text.
    fn think_close(&self, reasoning: Reasoning) -> Vec<u32> {
        let mut out = Vec::new();
        for piece in reasoning.close {
            let text = piece.text();
            match self.engine.tok.specials.get(text) {
                Some(&id) => out.push(id),
                None => out.extend(
                    self.engine
                        .model
                        .vocab()
                        .tokenize(text.as_bytes(), false, false)
                        .into_iter()
                        .map(|t| t.0 as u32),
                ),
            }
        }
        out
    }
}

/// Where the text must end when a stop sequence was completed by the step that began at
/// `step_start`: the start of the first such sequence.
fn stop_at(text: &[u8], step_start: usize, stop: &[String]) -> Option<usize> {
    stop.iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| {
            let s = s.as_bytes();
            let from = step_start.saturating_sub(s.len() - 1);
            text[from..]
                .windows(s.len())
                .position(|w| w == s)
                .map(|p| from + p)
        })
        .min()
}

fn constraint_err(e: impl std::fmt::Display) -> EngineError {
    EngineError::Constraint(e.to_string())
}

/// The matcher's error: a limit of llguidance's reached while decoding (a lexer or parser too
/// complex: a schema's nested counted repetitions, say) is the grammar's, so the client's to
/// fix; anything else is a constraint error. A matcher that failed keeps only the error's
/// text (its state says `InternalError`), which names the parser's stop reason.
fn matcher_err(m: &Matcher, e: impl std::fmt::Display) -> EngineError {
    const LIMITS: [&str; 2] = ["LexerTooComplex", "ParserTooComplex"];
    let why = e.to_string();
    let reason = m.stop_reason().to_string();
    let limit = LIMITS
        .into_iter()
        .find(|l| reason == *l || why.contains(&format!("Stop: {l}")));
    match limit {
        Some(limit) => {
            let first = why.lines().next().unwrap_or_default();
            EngineError::GrammarLimit(format!(
                "{first} ({limit}): the grammar engine's limit was reached while decoding; simplify the schema (nested counted repetitions in a `pattern`, a very long `enum`)"
            ))
        }
        None => constraint_err(why),
    }
}

/// The conversation (`messages`, `req`'s escaped) with prompt mode's instructions (tool-choice
/// rules and example calls) appended to the system message, or given as one; the examples'
/// values, taken from the client's schemas, escaped as client text (their markers are ours).
fn with_instructions(
    messages: &[ChatMessage],
    req: &CallRequest<'_>,
    syntax: &CallSyntax,
    client: &crate::client_text::ClientText,
) -> Vec<ChatMessage> {
    let escape = |v: &mut serde_json::Value| {
        client.escape_value(v, false);
    };
    let shape = req.shape();
    let block = prompt::few_shot(req.tools, &shape.choice, shape.parallel, syntax, &escape);
    let mut msgs = messages.to_vec();
    match msgs.first_mut() {
        Some(first) if first.role == "system" => {
            let text = first.content.clone().unwrap_or_default();
            first.content = Some(format!("{text}\n\n{block}").trim_start().to_owned());
        }
        _ => msgs.insert(0, ChatMessage::text("system", block)),
    }
    msgs
}

/// The text and calls of `answer`, read leniently in the model's syntax; with `partial`, a
/// reply that may end inside a call (that call is then marked `partial`).
fn read_leniently(
    answer: &str,
    syntax: &'static CallSyntax,
    tools: &ToolSet,
    partial: bool,
) -> Result<LenientOutput, ParseError> {
    let opts = LenientOptions {
        syntax: SyntaxChoice::Named(syntax),
        tools: Some(tools.tools()),
        thinking: false,
        reasoning_format: ReasoningFormat::None,
        partial,
        template: None,
    };
    lenient::parse(answer, &opts)
}

/// Read unconstrained (prompt-mode) text with the lenient parser, in the model's syntax
/// first; any failure (malformed, truncated, unknown tool) is the model's, to be fed back.
fn read_free_text(
    raw: &str,
    syntax: &'static CallSyntax,
    tools: &ToolSet,
) -> Result<ParsedOutput, EngineError> {
    let unreadable = |message: String| EngineError::Unreadable {
        raw: raw.to_owned(),
        message,
    };
    let out = read_leniently(raw, syntax, tools, false).map_err(|e| unreadable(e.to_string()))?;
    if !out.repairs.is_empty() {
        tracing::debug!(repairs = ?out.repairs, "lenient repairs");
    }
    Ok(ParsedOutput {
        content: Some(out.content).filter(|c| !c.is_empty()),
        tool_calls: out
            .tool_calls
            .into_iter()
            .map(|c| ToolCall {
                id: c.id,
                name: c.name,
                arguments: c.arguments,
            })
            .collect(),
    })
}

/// How a finished reply is read: its syntax, its grammar's plan, the pool, and whether the
/// token limit ended it (`budget` tokens).
struct Read<'a> {
    syntax: &'static CallSyntax,
    compiled: &'a CompiledGrammar,
    tools: &'a ToolSet,
    budget: usize,
    hit_limit: bool,
}

impl Read<'_> {
    /// A reply under a response format beside the tools: calls where it opens with the call
    /// syntax's opener (the grammar's call branch), else the answer in the format, all of it
    /// content. A syntax without an opener writes bare JSON calls, as the answer is JSON: the
    /// calls are read, and text that does not read as them is the answer.
    fn answer_or_calls(&self, raw: &str) -> Result<ParsedOutput, EngineError> {
        let opener = self.syntax.opener();
        let answer = || {
            Ok(ParsedOutput {
                content: Some(raw.trim().to_owned()).filter(|t| !t.is_empty()),
                tool_calls: Vec::new(),
            })
        };
        if !opener.is_empty() && !raw.trim_start().starts_with(&opener) {
            return answer();
        }
        match self.calls(raw) {
            Err(EngineError::Internal { .. }) if opener.is_empty() => answer(),
            read => read,
        }
    }

    /// The calls (and text) of a reply decoded under the call grammar.
    fn calls(&self, raw: &str) -> Result<ParsedOutput, EngineError> {
        let (budget, hit_limit) = (self.budget, self.hit_limit);
        match parse::parse_output(raw, self.syntax, self.tools, &self.compiled.choice) {
            Ok(p) => Ok(p),
            Err(ParseError::Truncated { partial }) => Err(EngineError::Truncated {
                partial,
                max_tokens: budget,
                repeated: None,
                usage: None,
            }),
            Err(e) if hit_limit => Err(EngineError::Truncated {
                partial: format!("{raw} ({e})"),
                max_tokens: budget,
                repeated: None,
                usage: None,
            }),
            Err(e) => Err(EngineError::Internal {
                reason: e.to_string(),
                text: raw.to_owned(),
            }),
        }
    }
}
