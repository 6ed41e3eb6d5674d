//! The grammar of a tool pool, or of one bare JSON Schema, as text in the format asked for —
//! llguidance Lark as the embedded engine runs it, GBNF for llama.cpp, fully expanded Lark for
//! OpenAI custom tools, a provider profile's JSON Schema — with what the text leaves to say
//! (notes and warnings, worded as every command words them), and the check of such text by
//! the engine that would run it (llguidance; llama.cpp's own GBNF parser over the test model's
//! vocabulary).
//!
//! A pool's Lark is what the engine would run: llguidance's `%json` for the arguments, or
//! toolgram's own schema grammars where llguidance refuses one (`compile_over_bytes`'s fallback).
//! This module must not print: notes are lines handed to the caller (pushed as they arise, so
//! a step that fails after one keeps what was said before it).

use crate::error::RunError;
use crate::format::refuse_unknown;
use serde_json::Value;
use toolgram_core::compile::ir::{IrCompileError, compile_ir};
use toolgram_core::compile::{self, CompileOptions, KeywordPass, bare_grammar_schema};
use toolgram_core::define::arguments::DeferredKeyword;
use toolgram_core::syntax::CallSyntax;
use toolgram_core::{ToolChoice, ToolSet};
use toolgram_engine::{EngineError, check_lark, compile_over_bytes, gbnf_check, models};
use toolgram_grammar::lark::{self, LarkDialect};
use toolgram_grammar::schema::{Note, NoteKind, SchemaOptions, to_grammar};
use toolgram_grammar::{Grammar, gbnf};
use toolgram_providers::ProviderError;
use toolgram_providers::profile::{self, Profile, ProfiledSchema};

/// The format of a grammar's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrammarFormat {
    /// llguidance Lark, as the embedded engine runs it.
    Lark,
    /// GBNF for llama.cpp / llama-server, from toolgram's own schema compiler.
    Gbnf,
    /// Fully expanded Lark that OpenAI accepts for custom tools.
    LarkOpenai,
    /// JSON Schema under a provider profile: the schema of one call (a discriminated union
    /// over the callable tools), or the bare schema itself.
    JsonSchema(Profile),
}

/// A tool pool as the call union under `choice`, in `syntax`, as `format`, its notes pushed
/// to `notes` (lines opening `note:` or `warning:`). `check` refuses what the engine's own
/// compiler refuses instead of giving the text it would fall back to.
pub fn pool_grammar(
    tools: &ToolSet,
    (choice, parallel): (&ToolChoice, bool),
    syntax: &'static CallSyntax,
    (opts, format, check): (&CompileOptions, GrammarFormat, bool),
    notes: &mut Vec<String>,
) -> Result<String, RunError> {
    let plan = match compile_over_bytes(tools, choice, parallel, syntax, opts) {
        Ok(plan) => plan,
        Err(e) if check => return Err(e.into()),
        Err(_) => {
            compile::compile(tools, choice, parallel, syntax, opts).map_err(EngineError::from)?
        }
    };
    notes.extend(plan.args_fallback.iter().map(|why| format!(
        "note: llguidance refused an argument schema ({why}); the arguments use toolgram's own schema grammars"
    )));
    match format {
        GrammarFormat::Lark => {
            let warnings = refuse_unknown(&plan.ignored, true, RunError::InvalidTools)?;
            notes.extend(warnings.iter().map(|w| format!("warning: {w}")));
            notes.extend(plan.deferred.iter().map(deferred_note));
            Ok(plan.lark)
        }
        GrammarFormat::Gbnf | GrammarFormat::LarkOpenai => {
            let ir = compile_ir(tools, choice, parallel, syntax, opts, opts.lenient).map_err(
                |e| match e {
                    IrCompileError::Request(e) => RunError::from(EngineError::from(e)),
                    IrCompileError::Schema(e) => RunError::InvalidTools(e.to_string()),
                },
            )?;
            notes.extend(ir.notes.iter().map(|(tool, n)| schema_note(tool, n)));
            if !choice.requires_call() && !ir.trigger.is_empty() && !ir.callable.is_empty() {
                notes.push(format!(
                    "note: under tool_choice auto the grammar admits text first; to apply it lazily (llama-server `grammar_lazy`), trigger on {:?}",
                    ir.trigger
                ));
            }
            Ok(ir_text(&ir.grammar, format))
        }
        GrammarFormat::JsonSchema(profile) => {
            let callable = tools.subset(&plan.callable).map_err(EngineError::from)?;
            let union = profile::call_union_schema(&callable, parallel, profile)
                .map_err(ProviderError::Profile)?;
            profiled(&union, notes)
        }
    }
}

/// One bare JSON Schema (objects stay open, as JSON Schema says) as `format`, its notes
/// pushed to `notes`; unknown keywords refused unless `lenient`.
pub fn schema_grammar(
    schema: &Value,
    (format, lenient): (GrammarFormat, bool),
    notes: &mut Vec<String>,
) -> Result<String, RunError> {
    match format {
        GrammarFormat::JsonSchema(profile) => profiled(
            &profile::render_parameters("schema", schema, profile)
                .map_err(ProviderError::Profile)?,
            notes,
        ),
        GrammarFormat::Gbnf | GrammarFormat::LarkOpenai => {
            let opts = SchemaOptions {
                lenient,
                ..SchemaOptions::default()
            };
            let (g, schema_notes) =
                to_grammar(schema, &opts).map_err(|e| RunError::InvalidSchema(e.to_string()))?;
            notes.extend(schema_notes.iter().map(|n| schema_note("", n)));
            Ok(ir_text(&g, format))
        }
        GrammarFormat::Lark => {
            let mut pass = KeywordPass::default();
            let text = format!("start: %json {}\n", bare_grammar_schema(schema, &mut pass));
            let warnings = refuse_unknown(&pass.unknown, lenient, RunError::InvalidSchema)?;
            notes.extend(warnings.iter().map(|w| format!("warning: {w}")));
            notes.extend(pass.deferred.iter().map(deferred_note));
            Ok(text)
        }
    }
}

/// Check `text` in `format` with the engine that would run it: llguidance for the Lark
/// formats, llama.cpp's own grammar parser (over the test model's vocabulary, fetched if it
/// is not here) for GBNF. JSON Schema has nothing to check.
pub fn check_grammar_text(text: &str, format: GrammarFormat) -> Result<(), RunError> {
    match format {
        GrammarFormat::Lark | GrammarFormat::LarkOpenai => Ok(check_lark(text)?),
        GrammarFormat::Gbnf => {
            let model = models::resolve(Some("test"))?;
            let verdict = gbnf_check::check(&model, text, &[])?;
            if !verdict.parsed || verdict.aborted {
                return Err(EngineError::Grammar(
                    "llama.cpp's grammar parser refused the GBNF (a toolgram bug: please report it)"
                        .into(),
                )
                .into());
            }
            Ok(())
        }
        GrammarFormat::JsonSchema(_) => Ok(()),
    }
}

/// An IR grammar as GBNF or OpenAI Lark.
fn ir_text(g: &Grammar, format: GrammarFormat) -> String {
    match format {
        GrammarFormat::Gbnf => gbnf::emit(g),
        _ => lark::emit(g, LarkDialect::OpenAi),
    }
}

/// A provider schema as pretty JSON, what the profile moved out of it pushed to `notes`.
fn profiled(p: &ProfiledSchema, notes: &mut Vec<String>) -> Result<String, RunError> {
    notes.extend(p.enforced_after_parse.iter().map(deferred_note));
    notes.extend(p.notes.iter().map(|n| format!("note: {n}")));
    serde_json::to_string_pretty(&p.schema).map_err(|e| RunError::InvalidSchema(e.to_string()))
}

/// A keyword the grammar leaves to the validator.
fn deferred_note(d: &DeferredKeyword) -> String {
    enforced_after(&d.tool, &d.pointer, &d.keyword)
}

/// A schema compiler's note on tool `tool` (empty for a bare schema).
fn schema_note(tool: &str, n: &Note) -> String {
    match &n.kind {
        NoteKind::Deferred => enforced_after(tool, &n.pointer, &n.keyword),
        NoteKind::Warning(w) => {
            format!("warning: {}: `{}`: {w}", place(tool, &n.pointer), n.keyword)
        }
    }
}

/// `keyword` at `pointer` of tool `tool`'s schema is checked after parsing.
fn enforced_after(tool: &str, pointer: &str, keyword: &str) -> String {
    format!(
        "note: {}: `{keyword}` is enforced after parsing, not by the grammar",
        place(tool, pointer)
    )
}

/// `tool `NAME` at POINTER` (no tool for a bare schema; `/` for the root).
fn place(tool: &str, pointer: &str) -> String {
    let whose = match tool {
        "" => String::new(),
        tool => format!("tool `{tool}` "),
    };
    let at = if pointer.is_empty() { "/" } else { pointer };
    format!("{whose}at {at}")
}
