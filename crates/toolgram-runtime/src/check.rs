//! Everything about a request that can be checked before it runs: the offered pool and
//! `tool_choice` compiled to the whole grammar and built by llguidance, or the
//! `response_format`'s grammar. Before a model is loaded ([`check_before_load`]) llguidance works over a
//! byte-level vocabulary; with the model loaded ([`ready`]) the engine's own compiler
//! builds the grammar the run decodes under, once, and the request leaves as a [`Ready`]:
//! the pool offered for it, the tools left out and that grammar, which its run reads and
//! never computes again. This module must not load a model or run one.

use crate::error::RunError;
use crate::format::{Prepared, answer_beside_tools, answer_schema, prepare, refuse_unknown};
use crate::pool;
use crate::request::Request;
use crate::response::FilteredTool;
use std::sync::Arc;
use toolgram_core::compile::{CompileOptions, CompiledGrammar};
use toolgram_core::syntax::CallSyntax;
use toolgram_engine::{
    ByteChecker, CallShape, CompiledCall, CompiledGeneration, Grammars, compile_over_bytes,
    generation_grammar,
};

/// What a checked request leaves to say.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// Unknown schema keywords left out as annotations (none under `strict_schemas`).
    pub warnings: Vec<String>,
    /// How the grammar was built, where it matters to the user.
    pub notes: Vec<String>,
}

/// A response format as its check made it ready: prepared (keyword pass, after-check,
/// warnings) once, and where it stands alone (no tools) its grammar compiled for the model.
#[derive(Debug)]
pub(crate) struct ReadyFormat {
    /// The format's grammar, its after-check and its warnings.
    pub prepared: Prepared,
    /// The free-generation grammar of a format without tools.
    pub alone: Option<CompiledGeneration>,
}

/// A request checked for its run ([`crate::Runtime::ready`]): the pool offered for it, the
/// tools left out, and on the embedded engine the call grammar compiled once in the model's
/// own syntax. Its run reads these and computes none of them again; only the check makes
/// one, so a request cannot change between its check and its run.
#[derive(Debug, Clone)]
pub struct Ready {
    /// The request, its `tools` the pool offered for it.
    pub(crate) req: Request,
    /// The tools left out (by its front end, then by the pool's filter), each with why.
    pub(crate) filtered_out: Vec<FilteredTool>,
    /// The call grammar: on the embedded engine for every request with tools (in prompt mode
    /// too: its parser reads the plan); `None` for a response format alone or a provider.
    pub(crate) call: Option<Arc<CompiledCall>>,
    /// The response format, prepared once on the embedded engine (and compiled there when
    /// it stands alone); `None` without one or on a provider.
    pub(crate) format: Option<Arc<ReadyFormat>>,
    /// What the check has to say.
    pub(crate) checked: Checked,
}

impl Ready {
    /// The request as it runs: its `tools` are the pool offered for it.
    pub fn request(&self) -> &Request {
        &self.req
    }

    /// The warnings and notes of the check.
    pub fn checked(&self) -> &Checked {
        &self.checked
    }

    /// A provider's request: nothing to compile, the provider checks its own.
    pub(crate) fn remote(req: Request) -> Result<Self, RunError> {
        let (req, filtered_out) = pool::offer(req)?;
        Ok(Self {
            req,
            filtered_out,
            call: None,
            format: None,
            checked: Checked::default(),
        })
    }
}

/// Check `req` as the embedded engine would compile it in `syntax`, before any model is
/// loaded (llguidance over bytes): a bad tool file fails in milliseconds, not after a
/// download.
pub fn check_before_load(req: &Request, syntax: &'static CallSyntax) -> Result<Checked, RunError> {
    let lenient = !req.strict_schemas;
    if let Some(format) = req.response_format.as_ref().filter(|_| req.format_only()) {
        let prepared = prepare(format, lenient)?;
        ByteChecker::new()?
            .compile_grammar(generation_grammar(
                &prepared.grammar,
                req.shape.think,
                &CompileOptions::default(),
            ))
            .map_err(|e| refused(e, req))?;
        return Ok(Checked {
            warnings: prepared.warnings,
            notes: Vec::new(),
        });
    }
    let offered = pool::offered(&req.tools, &req.messages, &req.shape.choice)?;
    let answer = answer_beside_tools(req)?;
    let shape = CallShape {
        answer: answer.as_ref().map(|(_, schema)| schema.clone()),
        ..req.shape.clone()
    };
    let opts = shape.options(&CompileOptions {
        lenient,
        ..CompileOptions::default()
    });
    let plan = compile_over_bytes(
        &offered.tools,
        &req.shape.choice,
        req.shape.parallel,
        syntax,
        &opts,
    )
    .map_err(|e| refused(e, req))?;
    let mut checked = checked_plan(&plan, lenient)?;
    checked
        .warnings
        .extend(answer.into_iter().flat_map(|(p, _)| p.warnings));
    Ok(checked)
}

/// What can be refused in `req` without compiling its grammar, so without a model: a
/// `tool_choice` naming no offered tool, a response format the tools cannot stand beside.
/// The grammar itself is compiled once, by the loaded engine in the model's own syntax
/// ([`crate::Runtime::ready`]).
pub fn check_offer(req: &Request) -> Result<(), RunError> {
    let offered = pool::offered(&req.tools, &req.messages, &req.shape.choice)?;
    req.shape
        .choice
        .callable(&offered.tools)
        .map_err(toolgram_engine::EngineError::from)?;
    answer_beside_tools(req)?;
    Ok(())
}

/// Check `req` with the loaded engine's compiler (`grammars`): the pool offered for it, its
/// response format prepared and its grammar (the call grammar, or the format's alone)
/// compiled, each once, carried to its run.
pub(crate) fn ready(grammars: &Grammars, req: Request) -> Result<Ready, RunError> {
    grammars.check_logit_bias(&req.sampling.logit_bias)?;
    let (mut req, filtered_out) = pool::offer(req)?;
    let prepared = req
        .response_format
        .as_ref()
        .map(|f| prepare(f, !req.strict_schemas))
        .transpose()?;
    if req.format_only() {
        let prepared =
            prepared.ok_or_else(|| RunError::InvalidRequest("no response_format".into()))?;
        let alone = grammars
            .compile_generation(&prepared.grammar, req.shape.think)
            .map_err(|e| refused(e, &req))?;
        let checked = Checked {
            warnings: prepared.warnings.clone(),
            notes: Vec::new(),
        };
        return Ok(Ready {
            req,
            filtered_out,
            call: None,
            format: Some(Arc::new(ReadyFormat {
                prepared,
                alone: Some(alone),
            })),
            checked,
        });
    }
    req.shape.answer = prepared.as_ref().map(answer_schema).transpose()?;
    let call = grammars
        .compile_call(&req.tools, &req.shape)
        .map_err(|e| refused(e, &req))?;
    let mut checked = checked_plan(call.plan(), !req.strict_schemas)?;
    if let Some(p) = &prepared {
        checked.warnings.extend(p.warnings.iter().cloned());
    }
    Ok(Ready {
        req,
        filtered_out,
        call: Some(Arc::new(call)),
        format: prepared.map(|prepared| {
            Arc::new(ReadyFormat {
                prepared,
                alone: None,
            })
        }),
        checked,
    })
}

/// A call grammar the engine's compiler refuses (a limit of llguidance's: lexer size, rules,
/// nesting) is the tools' to fix (with the response format beside them, if any), said as
/// such; a response format's own grammar error passes as it is (`grammar_error`, also the
/// client's). Other engine errors pass.
fn refused(e: toolgram_engine::EngineError, req: &Request) -> RunError {
    match e {
        toolgram_engine::EngineError::Grammar(why) if !req.format_only() => {
            let beside = if req.response_format.is_some() {
                " and the response format beside them"
            } else {
                ""
            };
            RunError::InvalidTools(format!(
                "the grammar of the tools offered{beside} is refused by the grammar engine: {why} (offer fewer or simpler tools)"
            ))
        }
        e => e.into(),
    }
}

/// The warnings and notes of a compiled plan; its unknown keywords refused unless `lenient`.
fn checked_plan(plan: &CompiledGrammar, lenient: bool) -> Result<Checked, RunError> {
    let warnings = refuse_unknown(&plan.ignored, lenient, RunError::InvalidTools)?;
    let notes = plan
        .args_fallback
        .iter()
        .map(|why| format!("llguidance refused an argument schema ({why}); the arguments use toolgram's own schema grammars"))
        .collect();
    Ok(Checked { warnings, notes })
}
