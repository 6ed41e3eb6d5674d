//! `toolgram grammar`: print the Lark grammar a tool pool compiles to, or check it.
//!
//! Markers that the model's vocabulary holds as special tokens are printed as text here (no
//! model is loaded); the engine references them by token id when it runs the grammar.

use crate::output::{CliError, say, say_raw};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use toolgram_core::ToolChoice;
use toolgram_core::compile::CompileOptions;
use toolgram_core::define::request::Think;
use toolgram_providers::profile::Profile;
use toolgram_runtime::{GrammarFormat, RunError, check_grammar_text, pool_grammar, schema_grammar};

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
    /// A reasoning block (the family's own, else <think>…</think>) before the answer or call:
    /// off, optional or required.
    #[arg(long, default_value = "off", value_parser = crate::args::think)]
    pub think: Think,
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

impl GrammarArgs {
    /// The format asked for (a profile's name read for `json-schema`).
    fn format(&self) -> anyhow::Result<GrammarFormat> {
        Ok(match self.format {
            Format::Lark => GrammarFormat::Lark,
            Format::Gbnf => GrammarFormat::Gbnf,
            Format::LarkOpenai => GrammarFormat::LarkOpenai,
            Format::JsonSchema => GrammarFormat::JsonSchema(Profile::from_name(&self.profile)?),
        })
    }
}

/// `--schema`: the grammar for one bare JSON Schema (objects stay open, as JSON Schema says).
fn run_schema(args: &GrammarArgs, path: &Path) -> anyhow::Result<()> {
    let schema = toolgram_runtime::read_schema_file(path)?;
    let format = args.format()?;
    let mut notes = Vec::new();
    let text = schema_grammar(&schema, (format, !args.strict_schemas), &mut notes);
    show(args, text, format, false, &notes)
}

pub(crate) fn run(args: GrammarArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.schema {
        return run_schema(&args, path);
    }
    let Some(tools_path) = &args.tools else {
        return Err(CliError::new("invalid_request", "give --tools or --schema").into());
    };
    let tools = toolgram_runtime::read_tools_file(tools_path)?;
    let syntax = toolgram_runtime::named_syntax(&args.syntax)?;
    let choice = ToolChoice::from_cli(&args.tool_choice);
    let opts = CompileOptions {
        think: args.think,
        lenient: !args.strict_schemas,
        ..CompileOptions::default()
    };
    let format = args.format()?;
    let mut notes = Vec::new();
    let (pool, how) = (
        (&choice, args.parallel_tool_calls),
        (&opts, format, args.check),
    );
    let text = pool_grammar(&tools, pool, syntax, how, &mut notes);
    // A pool's Lark was checked as it was built (`pool_grammar` with `check`).
    show(&args, text, format, format == GrammarFormat::Lark, &notes)
}

/// Print the grammar (or with `--check`, check it unless `checked`, and print `ok`), then the
/// notes on stderr — those said before a step failed too.
fn show(
    args: &GrammarArgs,
    text: Result<String, RunError>,
    format: GrammarFormat,
    checked: bool,
    notes: &[String],
) -> anyhow::Result<()> {
    let shown = text.map_err(anyhow::Error::from).and_then(|text| {
        match format {
            GrammarFormat::JsonSchema(_) => say!("{text}")?,
            _ if args.check => {
                if !checked {
                    check_grammar_text(&text, format)?;
                }
                say!("ok")?;
            }
            _ => say_raw!("{text}")?,
        }
        Ok(())
    });
    for note in notes {
        eprintln!("{note}");
    }
    shown
}
