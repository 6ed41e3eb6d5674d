//! `toolgram parse`: raw model text on stdin → the assistant message (`role`, `content`,
//! `reasoning_content`, `tool_calls`), read by the lenient parser of `toolgram-core`.
//!
//! Thin wiring only: no model is loaded and no parsing or detection logic lives here (the
//! syntax of a `--template` is found by the engine's `template::detect_source`, as `call` finds it).

use crate::output::{CliError, read_text, say};
use anyhow::Result;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use std::io::Read;
use std::path::PathBuf;
use toolgram_core::parse::lenient::{self, LenientOptions, ReasoningFormat, SyntaxChoice};
use toolgram_core::{ToolSet, syntax};
use toolgram_runtime::{lenient_message, named_syntax};

/// Arguments of `toolgram parse`.
#[derive(Args)]
pub(crate) struct ParseArgs {
    /// Jinja chat template file: the call syntax and reasoning markers are recognised in it.
    #[arg(long, conflicts_with = "syntax")]
    pub template: Option<PathBuf>,
    /// Call syntax by registry name or alias, or `auto` (every registered syntax).
    #[arg(long)]
    pub syntax: Option<String>,
    /// JSON file with OpenAI-style function tools: calls to other names are errors.
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// Was the template rendered with thinking on (the reply may start inside a block)?
    // `Set`: a `bool` field is otherwise a switch, and `--thinking on` would not parse.
    #[arg(long, default_value = "off", action = clap::ArgAction::Set,
        value_parser = PossibleValuesParser::new(["on", "off"]).map(|s| s == "on"))]
    pub thinking: bool,
    /// Where reasoning goes: `none` leaves it in content; `auto`/`deepseek` extract it.
    #[arg(long, default_value = "auto",
        value_parser = PossibleValuesParser::new(["none", "auto", "deepseek"]).map(|s| match s.as_str() {
            "none" => ReasoningFormat::None,
            "deepseek" => ReasoningFormat::Deepseek,
            _ => ReasoningFormat::Auto,
        }))]
    pub reasoning_format: ReasoningFormat,
    /// The text may stop mid-call (streaming): print the partial call instead of an error.
    #[arg(long)]
    pub partial: bool,
}

/// The syntax a template writes calls in, found as `call` and `serve` find it (a rendered
/// probe call, else derived from the rendered calls), said on stderr when a user should know.
fn detect(source: &str) -> &'static syntax::CallSyntax {
    let found = toolgram_engine::template::detect_source(source);
    if found.notable {
        eprintln!("note: call syntax {}", found.how);
    }
    found.syntax
}

/// Run `toolgram parse`.
pub(crate) fn run(args: ParseArgs) -> Result<()> {
    let template = match &args.template {
        Some(path) => Some(read_text(path, "chat template")?),
        None => None,
    };
    let choice = match (&template, args.syntax.as_deref()) {
        (Some(source), _) => SyntaxChoice::Named(detect(source)),
        (None, None | Some("auto")) => SyntaxChoice::Auto,
        (None, Some(name)) => SyntaxChoice::Named(named_syntax(name)?),
    };
    let tools = match &args.tools {
        Some(p) => Some(toolgram_runtime::read_tools_file(p)?),
        None => None,
    };
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| CliError::new("invalid_request", format!("stdin: {e}")))?;
    let opts = LenientOptions {
        syntax: choice,
        tools: tools.as_ref().map(ToolSet::tools),
        thinking: args.thinking,
        reasoning_format: args.reasoning_format,
        partial: args.partial,
        template: template.as_deref(),
    };
    let out = lenient::parse(&text, &opts).map_err(|e| CliError::new(e.kind(), e.to_string()))?;
    say!("{}", lenient_message(&out))?;
    Ok(())
}
