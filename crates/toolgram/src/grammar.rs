//! `toolgram grammar`: print the Lark grammar a tool pool compiles to, or check it.
//!
//! Markers that the model's vocabulary holds as special tokens are printed as text here (no
//! model is loaded); the engine references them by token id when it runs the grammar.

use crate::call::ThinkArg;
use crate::output::CliError;
use clap::{Args, ValueEnum};
use serde_json::Value;
use std::path::{Path, PathBuf};
use toolgram_core::compile::CompileOptions;
use toolgram_core::grammar::lark::LarkDialect;
use toolgram_core::profile::{self, Profile};
use toolgram_core::{ToolChoice, ToolSet, compile, syntax};
use toolgram_engine::{EngineError, check_grammar, check_request};

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// llguidance Lark, as the embedded engine runs it.
    Lark,
    /// GBNF for llama.cpp / llama-server (`--schema` only so far), from toolgram's own schema
    /// compiler.
    Gbnf,
    /// Fully expanded Lark that OpenAI accepts for custom tools (`--schema` only so far).
    LarkOpenai,
    /// JSON Schema under a provider profile (`--profile`): the schema of one call (a
    /// discriminated union over the callable tools), or of `--schema` itself.
    JsonSchema,
}

#[derive(Args)]
pub struct GrammarArgs {
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
    /// Allow or demand a <think>…</think> block before the answer or call.
    #[arg(long, value_enum, default_value = "off")]
    pub think: ThinkArg,
    /// Provider profile for `--format json-schema`: openai-strict, anthropic, gemini.
    #[arg(long, default_value = "openai-strict")]
    pub profile: String,
    /// Compile the grammar with llguidance and report errors instead of printing it.
    #[arg(long)]
    pub check: bool,
}

fn read(path: &Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        CliError::new(
            "io_error",
            format!("cannot read {what} {}: {e}", path.display()),
        )
        .into()
    })
}

fn note_deferred(deferred: &[compile::DeferredKeyword]) {
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
    let schema: Value = serde_json::from_str(&read(path, "schema")?).map_err(|e| {
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
        let opts = toolgram_core::schema::SchemaOptions::default();
        let (g, notes) = toolgram_core::schema::to_grammar(&schema, &opts)
            .map_err(|e| CliError::new("invalid_schema", e.to_string()))?;
        let text = match args.format {
            Format::Gbnf => toolgram_core::grammar::gbnf::emit(&g),
            _ => toolgram_core::grammar::lark::emit(&g, LarkDialect::OpenAi),
        };
        if args.check {
            if matches!(args.format, Format::LarkOpenai) {
                check_grammar(&text)?;
            }
            println!("ok");
        } else {
            print!("{text}");
        }
        for n in &notes {
            let at = if n.pointer.is_empty() {
                "/"
            } else {
                &n.pointer
            };
            match &n.kind {
                toolgram_core::schema::NoteKind::Deferred => eprintln!(
                    "note: at {at}: `{}` is enforced after parsing, not by the grammar",
                    n.keyword
                ),
                toolgram_core::schema::NoteKind::Warning(w) => {
                    eprintln!("warning: at {at}: `{}`: {w}", n.keyword)
                }
            }
        }
        return Ok(());
    }
    let mut deferred = Vec::new();
    let lark = format!(
        "start: %json {}\n",
        compile::bare_grammar_schema(&schema, &mut deferred)
    );
    if args.check {
        check_grammar(&lark)?;
        println!("ok");
    } else {
        print!("{lark}");
    }
    note_deferred(&deferred);
    Ok(())
}

pub fn run(args: GrammarArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.schema {
        return run_schema(&args, path);
    }
    let Some(tools_path) = &args.tools else {
        return Err(CliError::new("invalid_request", "give --tools or --schema").into());
    };
    let text = read(tools_path, "tools file")?;
    let tools = ToolSet::from_json_str(&text).map_err(EngineError::from)?;
    let syntax = syntax::by_name(&args.syntax).ok_or_else(|| {
        CliError::new(
            "invalid_request",
            format!("unknown call syntax `{}`", args.syntax),
        )
    })?;
    let choice = ToolChoice::from_cli(&args.tool_choice);
    let opts = CompileOptions {
        think: args.think.into(),
        ..CompileOptions::default()
    };
    let plan = if args.check {
        check_request(&tools, &choice, args.parallel_tool_calls, syntax, &opts)?
    } else {
        compile::compile(&tools, &choice, args.parallel_tool_calls, syntax, &opts)
            .map_err(EngineError::from)?
    };
    match args.format {
        Format::Lark if args.check => println!("ok"),
        Format::Lark => print!("{}", plan.lark),
        Format::Gbnf | Format::LarkOpenai => {
            return Err(CliError::new(
                "invalid_request",
                "--format gbnf and lark-openai take --schema; for a tool pool use lark or json-schema",
            )
            .into());
        }
        Format::JsonSchema => {
            let callable = tools.subset(&plan.callable).map_err(EngineError::from)?;
            let profile = Profile::from_name(&args.profile)?;
            let union = profile::call_union_schema(&callable, args.parallel_tool_calls, profile)?;
            return print_profiled(&union);
        }
    }
    note_deferred(&plan.deferred);
    Ok(())
}

/// Print a provider schema (pretty JSON) and, on stderr, what the profile moved out of it.
fn print_profiled(p: &profile::ProfiledSchema) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(&p.schema)?);
    note_deferred(&p.enforced_after_parse);
    for n in &p.notes {
        eprintln!("note: {n}");
    }
    Ok(())
}
