//! A request's tool-call grammar, compiled once. [`Grammars`] is the engine's grammar compiler
//! for its model's vocabulary — llguidance's parser factory, the compiled-grammar cache, the
//! compile options of the model's call syntax — shared with any thread. [`Grammars::compile_call`]
//! turns a pool and its [`CallShape`] (`tool_choice`, parallel calls, mode, think block, call
//! cap) into a [`CompiledCall`]: core's union (with toolgram's own argument grammars where
//! llguidance refuses a schema, and the refused tool named when even that fails) and its
//! llguidance grammar in the start state. Whoever sees the request first makes it — the run
//! stage's check before a request is queued, or a session given none — and every later reader
//! takes it: each attempt of the retry loop, a stream's choice between a live and a held reply.
//! It counts what it compiles, so a test can say how often one request was compiled.
//! `compile_pool` — union, fallback, refused tool named — is the one compile path of both this
//! and the check before a model is loaded (`compile_over_bytes`, llguidance over bytes).
//!
//! This module must not decode or render prompts: the session does.

use crate::error::EngineError;
use crate::grammar::generation::{CompiledGeneration, UserGrammar, generation_grammar};
use crate::grammar_cache::GrammarCache;
use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use toolgram_core::compile::{self, CompileOptions, CompiledGrammar};
pub use toolgram_core::define::request::CallShape;
use toolgram_core::define::request::{Plan, Think};
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ToolChoice, ToolSet};

/// A pool's call grammar for one [`CallShape`]: the plan core compiled (what is callable,
/// what the validator must still check) and its llguidance grammar, ready to decode.
pub struct CompiledCall {
    shape: CallShape,
    plan: CompiledGrammar,
    /// The grammar in its start state; each attempt decodes under a deep clone.
    fresh: Mutex<Matcher>,
    /// Under [`Plan::Calls`] where the reply may call or not: the same pool without the plan,
    /// under which the reply's call-or-text choice is made first.
    decider: Option<Box<CompiledCall>>,
    compile_ms: f64,
}

impl std::fmt::Debug for CompiledCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledCall")
            .field("shape", &self.shape)
            .field("lark_bytes", &self.plan.lark.len())
            .finish_non_exhaustive()
    }
}

impl CompiledCall {
    /// What it was compiled for.
    pub fn shape(&self) -> &CallShape {
        &self.shape
    }

    /// Core's plan: the Lark text, the callable tools, the keywords left to the validator.
    pub fn plan(&self) -> &CompiledGrammar {
        &self.plan
    }

    /// What compiling it took (core's union and llguidance's parser, or a cache hit).
    pub fn compile_ms(&self) -> f64 {
        self.compile_ms
    }

    /// Whether a reply decoded under this grammar can still fail validation for its
    /// keywords: some were left to the validator.
    pub fn defers_keywords(&self) -> bool {
        !self.plan.deferred.is_empty()
    }

    /// The unplanned grammar whose reply chooses call or text before a plan counts the
    /// calls ([`Plan::Calls`]); `None` where the reply is not planned or must call.
    pub(crate) fn decider(&self) -> Option<&CompiledCall> {
        self.decider.as_deref()
    }

    /// A matcher in the grammar's start state.
    pub(crate) fn matcher(&self) -> Result<Matcher, EngineError> {
        self.fresh
            .lock()
            .map(|m| m.deep_clone())
            .map_err(|_| EngineError::Grammar("a compiled grammar's lock was poisoned".into()))
    }
}

/// How much [`Grammars`] has compiled since the model was loaded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrammarStats {
    /// Call grammars compiled ([`Grammars::compile_call`]): one per request that reached the
    /// engine with a pool, however many attempts it took.
    pub calls_compiled: u64,
    /// Free-generation grammars compiled ([`Grammars::compile_generation`]): one per request
    /// with a response format alone, however many attempts it took.
    pub generations_compiled: u64,
    /// Grammar texts llguidance built a parser for (compiled-grammar cache misses).
    pub parsers_built: u64,
    /// Grammar texts found already built (cache hits).
    pub cache_hits: u64,
}

/// The engine's grammar compiler for its model's vocabulary.
pub struct Grammars {
    factory: ParserFactory,
    cache: GrammarCache,
    opts: CompileOptions,
    syntax: &'static CallSyntax,
    calls_compiled: AtomicU64,
    generations_compiled: AtomicU64,
}

impl Grammars {
    pub(crate) fn new(
        factory: ParserFactory,
        opts: CompileOptions,
        syntax: &'static CallSyntax,
    ) -> Self {
        Self {
            factory,
            cache: GrammarCache::default(),
            opts,
            syntax,
            calls_compiled: AtomicU64::new(0),
            generations_compiled: AtomicU64::new(0),
        }
    }

    /// Options the compiler needs for this vocabulary (its special marker tokens).
    pub fn compile_options(&self) -> &CompileOptions {
        &self.opts
    }

    /// The options a call grammar of `shape` is compiled with.
    pub(crate) fn call_options(&self, shape: &CallShape) -> CompileOptions {
        shape.options(&self.opts)
    }

    /// Compile `tools` for `shape` into the grammar the reply decodes under; a schema neither
    /// llguidance nor toolgram's own compiler can take is an error naming its tool. Unknown
    /// keywords are left out (listed in the plan's `ignored`); refusing them is the caller's.
    pub fn compile_call(
        &self,
        tools: &ToolSet,
        shape: &CallShape,
    ) -> Result<CompiledCall, EngineError> {
        self.calls_compiled.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(tools = tools.tools().len(), "call grammar compiled");
        let started = Instant::now();
        let opts = self.call_options(shape);
        let request = PoolRequest {
            tools,
            choice: &shape.choice,
            parallel: shape.parallel,
            syntax: self.syntax,
            opts: &opts,
        };
        let (plan, fresh) = compile_pool(&request, |lark| self.matcher(lark))?;
        if let Some(why) = &plan.args_fallback {
            tracing::warn!(refused = %why, "llguidance refused an argument schema; using toolgram's own schema grammar");
        }
        let decider = if shape.plan == Plan::Calls && plan.planned && !shape.choice.requires_call()
        {
            Some(Box::new(self.compile_call(tools, &shape.unplanned())?))
        } else {
            None
        };
        Ok(CompiledCall {
            shape: shape.clone(),
            plan,
            fresh: Mutex::new(fresh),
            decider,
            compile_ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// Whether every `logit_bias` id is in this model's vocabulary (checked before a request
    /// is queued, so a bad id is a 400 rather than a failed run).
    pub fn check_logit_bias(&self, entries: &[(u32, f32)]) -> Result<(), EngineError> {
        let n_vocab = self.factory.tok_env().tok_trie().vocab_size();
        crate::tokenizer::check_bias_ids(entries, n_vocab)
    }

    /// Compile a user grammar (a response format alone, `toolgram generate`) for free
    /// generation under `think`, once per request; its error is the grammar's.
    pub fn compile_generation(
        &self,
        user: &UserGrammar,
        think: Think,
    ) -> Result<CompiledGeneration, EngineError> {
        self.generations_compiled.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let matcher = self.parser(generation_grammar(user, think, &self.opts))?;
        Ok(CompiledGeneration::new(
            think,
            matcher,
            started.elapsed().as_secs_f64() * 1e3,
        ))
    }

    /// A matcher for a Lark grammar in its start state, from the compiled-grammar cache.
    pub(crate) fn matcher(&self, lark: &str) -> Result<Matcher, EngineError> {
        self.cache.get(lark, || {
            self.parser(TopLevelGrammar::from_lark(lark.to_owned()))
        })
    }

    /// A fresh matcher for any llguidance grammar (not cached), or the grammar's error.
    pub(crate) fn parser(&self, grammar: TopLevelGrammar) -> Result<Matcher, EngineError> {
        let parser = self
            .factory
            .create_parser(grammar)
            .map_err(|e| EngineError::Grammar(e.to_string()))?;
        Ok(Matcher::new(Ok(parser)))
    }

    /// What has been compiled so far.
    pub fn stats(&self) -> GrammarStats {
        let (cache_hits, parsers_built) = self.cache.stats();
        GrammarStats {
            calls_compiled: self.calls_compiled.load(Ordering::Relaxed),
            generations_compiled: self.generations_compiled.load(Ordering::Relaxed),
            parsers_built,
            cache_hits,
        }
    }
}

/// Compile a pool into its call grammar, taken by `accept` (llguidance with some vocabulary):
/// the whole union; if it is refused, the same pool with argument grammars from toolgram's own
/// schema compiler ([`accept_with_fallback`]); if that is refused too, each callable tool
/// alone, so the error names the tool whose schema llguidance cannot take.
pub(crate) fn compile_pool<T>(
    request: &PoolRequest<'_>,
    accept: impl Fn(&str) -> Result<T, EngineError>,
) -> Result<(CompiledGrammar, T), EngineError> {
    let PoolRequest {
        tools,
        syntax,
        opts,
        ..
    } = *request;
    let plan = compile::compile(tools, request.choice, request.parallel, syntax, opts)?;
    let callable = plan.callable.clone();
    match accept_with_fallback(plan, request, &accept) {
        Ok(accepted) => Ok(accepted),
        Err(whole) => {
            for i in callable {
                let name = &tools.tools()[i].name;
                let one =
                    compile::compile(tools, &ToolChoice::Named(name.clone()), false, syntax, opts)?;
                if let Err(EngineError::Grammar(message)) = accept(&one.lark) {
                    return Err(EngineError::ToolSchema {
                        tool: name.clone(),
                        message: first_line(&message),
                    });
                }
            }
            Err(whole)
        }
    }
}

/// What a tool-call grammar is compiled from.
pub(crate) struct PoolRequest<'a> {
    pub tools: &'a ToolSet,
    pub choice: &'a ToolChoice,
    pub parallel: bool,
    pub syntax: &'a CallSyntax,
    pub opts: &'a CompileOptions,
}

/// `plan` if `accept` (llguidance with some vocabulary) takes its Lark; else, in grammar
/// mode, the pool compiled again with every argument grammar from toolgram's own schema
/// compiler (where llguidance's `%json` refuses an argument schema), its `args_fallback`
/// saying why; the first refusal when neither is taken.
fn accept_with_fallback<T>(
    plan: CompiledGrammar,
    request: &PoolRequest<'_>,
    accept: impl Fn(&str) -> Result<T, EngineError>,
) -> Result<(CompiledGrammar, T), EngineError> {
    let first = match accept(&plan.lark) {
        Ok(accepted) => return Ok((plan, accepted)),
        Err(e) => e,
    };
    if request.opts.mode != toolgram_core::define::request::Mode::Grammar {
        return Err(first);
    }
    let ir_opts = CompileOptions {
        args_from_ir: true,
        ..request.opts.clone()
    };
    let Ok(mut again) = compile::compile(
        request.tools,
        request.choice,
        request.parallel,
        request.syntax,
        &ir_opts,
    ) else {
        return Err(first);
    };
    match accept(&again.lark) {
        Ok(accepted) => {
            tracing::debug!(refused = %first, "llguidance refused an argument schema; using toolgram's own schema grammar");
            again.args_fallback = Some(first_line(&first.to_string()));
            Ok((again, accepted))
        }
        Err(_) => Err(first),
    }
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or_default().to_owned()
}
