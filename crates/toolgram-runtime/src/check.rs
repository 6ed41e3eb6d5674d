//! Everything about a request that can be checked without a model, checked before one is
//! loaded: the offered pool and `tool_choice` compiled to the whole grammar and compiled by
//! llguidance, or the `response_format`'s grammar. This module must not load a model.

use crate::error::RunError;
use crate::format::{prepare, refuse_unknown};
use crate::pool;
use crate::request::Request;
use toolgram_core::compile::CompileOptions;
use toolgram_core::syntax::CallSyntax;
use toolgram_engine::{ByteChecker, check_request, generation_grammar};

/// What a checked request leaves to say.
#[derive(Debug, Default)]
pub struct Checked {
    /// Unknown schema keywords left out as annotations (none under `strict_schemas`).
    pub warnings: Vec<String>,
    /// How the grammar was built, where it matters to the user.
    pub notes: Vec<String>,
}

/// Check `req` as the embedded engine would compile it in `syntax`.
pub fn check(req: &Request, syntax: &'static CallSyntax) -> Result<Checked, RunError> {
    let lenient = !req.strict_schemas;
    if let Some(format) = &req.response_format {
        let prepared = prepare(format, lenient)?;
        ByteChecker::new()?.compile_grammar(generation_grammar(
            &prepared.grammar,
            req.think,
            &CompileOptions::default(),
        ))?;
        return Ok(Checked {
            warnings: prepared.warnings,
            notes: Vec::new(),
        });
    }
    let (tools, _) = pool::offered(&req.tools, &req.messages, &req.tool_choice)?;
    let opts = CompileOptions {
        mode: req.mode,
        think: req.think,
        lenient,
        ..CompileOptions::default()
    };
    let plan = check_request(
        &tools,
        &req.tool_choice,
        req.parallel_tool_calls,
        syntax,
        &opts,
    )?;
    let warnings = refuse_unknown(&plan.ignored, lenient, RunError::InvalidTools)?;
    let notes = plan
        .args_fallback
        .iter()
        .map(|why| format!("llguidance refused an argument schema ({why}); the arguments use toolgram's own schema grammars"))
        .collect();
    Ok(Checked { warnings, notes })
}
