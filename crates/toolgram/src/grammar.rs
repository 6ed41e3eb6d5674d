//! `toolgram grammar`: print the Lark grammar a tool pool compiles to, or check it.
//!
//! Markers that the model's vocabulary holds as special tokens are printed as text here (no
//! model is loaded); the engine references them by token id when it runs the grammar.

use crate::call::ThinkArg;
use crate::output::CliError;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use toolgram_core::compile::CompileOptions;
use toolgram_core::{ToolChoice, ToolSet, compile, syntax};
use toolgram_engine::{EngineError, check_request};

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// llguidance Lark, as the embedded engine runs it.
    Lark,
}

#[derive(Args)]
pub struct GrammarArgs {
    /// JSON file with OpenAI-style function tools.
    #[arg(long)]
    pub tools: PathBuf,
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
    /// Compile the grammar with llguidance and report errors instead of printing it.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: GrammarArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.tools).map_err(|e| {
        CliError::new(
            "io_error",
            format!("cannot read tools file {}: {e}", args.tools.display()),
        )
    })?;
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
    }
    for d in &plan.deferred {
        eprintln!(
            "note: tool `{}` at {}: `{}` is enforced after parsing, not by the grammar",
            d.tool, d.pointer, d.keyword
        );
    }
    Ok(())
}
