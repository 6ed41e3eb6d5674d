//! `toolgram grammar`: print the Lark grammar a tool pool compiles to, or check it.
//!
//! Markers that the model's vocabulary holds as special tokens are printed as text here (no
//! model is loaded); the engine references them by token id when it runs the grammar.

use crate::args::ThinkArg;
use crate::output::{CliError, read_text, say, say_raw};
use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::Value;
use std::path::{Path, PathBuf};
use toolgram_core::compile::CompileOptions;
use toolgram_core::compile::ir::{IrCompileError, compile_ir};
use toolgram_core::{ToolChoice, compile, syntax};
use toolgram_engine::{EngineError, check_grammar, check_request};
use toolgram_engine::{gbnf_check, models};
use toolgram_grammar::lark::{self, LarkDialect};
use toolgram_grammar::schema::{Note, NoteKind};
use toolgram_grammar::{Grammar, gbnf};
use toolgram_providers::profile::{self, Profile};
use toolgram_runtime::{RunError, refuse_unknown};

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    /// llguidance Lark, as the embedded engine runs it.
    Lark,
    /// GBNF for llama.cpp / llama-server, from toolgram's own schema compiler.
    Gbnf,
    /// Fully expanded Lark that OpenAI accepts for custom tools.
    LarkOpenai,
    /// JSON Schema under a provider profile (`--profile`): the schema of one call (a
    /// discriminated union over the callable tools), or of `--schema` itself.
    JsonSchema,
}

#[derive(Args)]
pub(crate) struct GrammarArgs {
    /// JSON file with OpenAI-style function tools.
    #[arg(long, required_unless_present = "schema")]
    pub tools: Option<PathBuf>,
    /// Instead of a tool pool: one bare JSON Schema file.
    #[arg(long, conflicts_with = "tools")]
    pub schema: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "lark")]
    pub format: Format,
    /// auto, none, required, or a tool name.
    #[arg(long, default_value = "auto")]
    pub tool_choice: String,
    /// Allow more than one call.
    #[arg(long)]
    pub parallel_tool_calls: bool,
    /// Call syntax (hermes, mistral, llama3-json, generic-json).
    #[arg(long, default_value = "hermes")]
    pub syntax: String,
    /// Allow or demand a reasoning block (the family's own, else <think>…</think>) before the
    /// answer or call.
    #[arg(long, value_enum, default_value = "off")]
    pub think: ThinkArg,
    /// Provider profile for `--format json-schema`: openai-strict, anthropic, gemini.
    #[arg(long, default_value = "openai-strict")]
    pub profile: String,
    /// Compile the grammar and report errors instead of printing it: llguidance for the Lark
    /// formats, llama.cpp's own grammar parser (with the test model's vocabulary) for GBNF.
    #[arg(long)]
    pub check: bool,
    /// Refuse schemas with keywords toolgram does not know (by default they are annotations:
    /// listed as warnings, left out of the grammar).
    #[arg(long)]
    pub strict_schemas: bool,
}

/// Say on stderr when llguidance refused an argument schema and toolgram's own schema
/// grammars stand in (never a silent change of path).
fn note_fallback(plan: &compile::CompiledGrammar) {
    if let Some(why) = &plan.args_fallback {
        eprintln!(
            "note: llguidance refused an argument schema ({why}); the arguments use toolgram's own schema grammars"
        );
    }
}

fn note_deferred(deferred: &[toolgram_core::define::arguments::DeferredKeyword]) {
    for d in deferred {
        let whose = if d.tool.is_empty() {
            String::new()
        } else {
            format!("tool `{}` ", d.tool)
        };
        eprintln!(
            "note: {whose}at {}: `{}` is enforced after parsing, not by the grammar",
            if d.pointer.is_empty() {
                "/"
            } else {
                &d.pointer
            },
            d.keyword
        );
    }
}

/// `--schema`: the grammar for one bare JSON Schema (objects stay open, as JSON Schema says).
fn run_schema(args: &GrammarArgs, path: &Path) -> anyhow::Result<()> {
    let schema: Value = serde_json::from_str(&read_text(path, "schema")?).map_err(|e| {
        CliError::new(
            "invalid_schema",
            format!("{}: not JSON: {e}", path.display()),
        )
    })?;
    if matches!(args.format, Format::JsonSchema) {
        let profiled =
            profile::render_parameters("schema", &schema, Profile::from_name(&args.profile)?)?;
        return print_profiled(&profiled);
    }
    if matches!(args.format, Format::Gbnf | Format::LarkOpenai) {
        let opts = toolgram_grammar::schema::SchemaOptions {
            lenient: !args.strict_schemas,
            ..toolgram_grammar::schema::SchemaOptions::default()
        };
        let (g, notes) = toolgram_grammar::schema::to_grammar(&schema, &opts)
            .map_err(|e| CliError::new("invalid_schema", e.to_string()))?;
        emit_ir(args, &g)?;
        for n in &notes {
            print_note("", n);
        }
        return Ok(());
    }
    let mut pass = compile::KeywordPass::default();
    let lark = format!(
        "start: %json {}\n",
        compile::bare_grammar_schema(&schema, &mut pass)
    );
    refuse_or_list_unknown(&pass.unknown, !args.strict_schemas, RunError::InvalidSchema)?;
    if args.check {
        check_grammar(&lark)?;
        say!("ok")?;
    } else {
        say_raw!("{lark}")?;
    }
    let deferred = pass.deferred;
    note_deferred(&deferred);
    Ok(())
}

pub(crate) fn run(args: GrammarArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.schema {
        return run_schema(&args, path);
    }
    let Some(tools_path) = &args.tools else {
        return Err(CliError::new("invalid_request", "give --tools or --schema").into());
    };
    let tools = toolgram_runtime::read_tools_file(tools_path)?;
    let syntax = syntax::by_name(&args.syntax).ok_or_else(|| {
        CliError::new(
            "invalid_request",
            format!("unknown call syntax `{}`", args.syntax),
        )
    })?;
    let choice = ToolChoice::from_cli(&args.tool_choice);
    let opts = CompileOptions {
        think: args.think.into(),
        lenient: !args.strict_schemas,
        ..CompileOptions::default()
    };
    // What the engine would run: with llguidance's `%json`, or — where llguidance refuses an
    // argument schema — with toolgram's own schema grammars (`check_request`'s fallback).
    let checked = check_request(&tools, &choice, args.parallel_tool_calls, syntax, &opts);
    let plan = match checked {
        Ok(plan) => plan,
        Err(e) if args.check => return Err(e.into()),
        Err(_) => compile::compile(&tools, &choice, args.parallel_tool_calls, syntax, &opts)
            .map_err(EngineError::from)?,
    };
    note_fallback(&plan);
    match args.format {
        Format::Lark if args.check => say!("ok")?,
        Format::Lark => say_raw!("{}", plan.lark)?,
        Format::Gbnf | Format::LarkOpenai => {
            let ir = compile_ir(
                &tools,
                &choice,
                args.parallel_tool_calls,
                syntax,
                &opts,
                !args.strict_schemas,
            )
            .map_err(|e| match e {
                IrCompileError::Request(e) => anyhow::Error::from(EngineError::from(e)),
                IrCompileError::Schema(e) => CliError::new("invalid_tools", e.to_string()).into(),
            })?;
            emit_ir(&args, &ir.grammar)?;
            for (tool, n) in &ir.notes {
                print_note(tool, n);
            }
            if !choice.requires_call() && !ir.trigger.is_empty() && !ir.callable.is_empty() {
                eprintln!(
                    "note: under tool_choice auto the grammar admits text first; to apply it lazily (llama-server `grammar_lazy`), trigger on {:?}",
                    ir.trigger
                );
            }
            return Ok(());
        }
        Format::JsonSchema => {
            let callable = tools.subset(&plan.callable).map_err(EngineError::from)?;
            let profile = Profile::from_name(&args.profile)?;
            let union = profile::call_union_schema(&callable, args.parallel_tool_calls, profile)?;
            return print_profiled(&union);
        }
    }
    refuse_or_list_unknown(&plan.ignored, true, RunError::InvalidTools)?;
    note_deferred(&plan.deferred);
    Ok(())
}

/// Unknown keywords: an error naming the first, or with `lenient` one warning each (the
/// runtime's wording, so every command says it the same way).
fn refuse_or_list_unknown(
    unknown: &[toolgram_core::define::arguments::DeferredKeyword],
    lenient: bool,
    error: fn(String) -> RunError,
) -> anyhow::Result<()> {
    for w in refuse_unknown(unknown, lenient, error)? {
        eprintln!("warning: {w}");
    }
    Ok(())
}

/// Print (or with `--check`, check) an IR grammar as GBNF or OpenAI Lark.
fn emit_ir(args: &GrammarArgs, g: &Grammar) -> anyhow::Result<()> {
    let text = match args.format {
        Format::Gbnf => gbnf::emit(g),
        _ => lark::emit(g, LarkDialect::OpenAi),
    };
    if !args.check {
        say_raw!("{text}")?;
        return Ok(());
    }
    if matches!(args.format, Format::Gbnf) {
        let model =
            models::resolve(Some("test")).context("fetching the test model's vocabulary")?;
        let verdict = gbnf_check::check(&model, &text, &[])?;
        if !verdict.parsed || verdict.aborted {
            return Err(CliError::new(
                "invalid_grammar",
                "llama.cpp's grammar parser refused the GBNF (a toolgram bug: please report it)",
            )
            .into());
        }
    } else {
        check_grammar(&text)?;
    }
    say!("ok")?;
    Ok(())
}

fn print_note(tool: &str, n: &Note) {
    let whose = if tool.is_empty() {
        String::new()
    } else {
        format!("tool `{tool}` ")
    };
    let at = if n.pointer.is_empty() {
        "/"
    } else {
        &n.pointer
    };
    match &n.kind {
        NoteKind::Deferred => eprintln!(
            "note: {whose}at {at}: `{}` is enforced after parsing, not by the grammar",
            n.keyword
        ),
        NoteKind::Warning(w) => eprintln!("warning: {whose}at {at}: `{}`: {w}", n.keyword),
    }
}

/// Print a provider schema (pretty JSON) and, on stderr, what the profile moved out of it.
fn print_profiled(p: &profile::ProfiledSchema) -> anyhow::Result<()> {
    say!("{}", serde_json::to_string_pretty(&p.schema)?)?;
    note_deferred(&p.enforced_after_parse);
    for n in &p.notes {
        eprintln!("note: {n}");
    }
    Ok(())
}
