//! `toolgram parse`: raw model text on stdin → the assistant message (`role`, `content`,
//! `reasoning_content`, `tool_calls`), read by the lenient parser of `toolgram-core`.
//!
//! Thin wiring only: no model is loaded and no parsing or detection logic lives here (the
//! syntax of a `--template` is found by the engine's `template::detect_source`, as `call` finds it).

use crate::output::{CliError, read_text, say};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::io::Read;
use std::path::PathBuf;
use toolgram_core::parse::lenient::{self, LenientOptions, ReasoningFormat, SyntaxChoice};
use toolgram_core::{ParseError, ToolSet, syntax};
use toolgram_runtime::{openai_assistant_message, openai_function_call};

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
    #[arg(long, value_enum, default_value = "off")]
    pub thinking: OnOff,
    /// Where reasoning goes: `none` leaves it in content; `auto`/`deepseek` extract it.
    #[arg(long, value_enum, default_value = "auto")]
    pub reasoning_format: Format,
    /// The text may stop mid-call (streaming): print the partial call instead of an error.
    #[arg(long)]
    pub partial: bool,
}

/// `on` / `off`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum OnOff {
    /// Enabled.
    On,
    /// Disabled.
    Off,
}

/// `--reasoning-format` values.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    /// Leave reasoning in content.
    None,
    /// Extract reasoning.
    Auto,
    /// Extract reasoning (DeepSeek naming).
    Deepseek,
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
        (None, Some(name)) => SyntaxChoice::Named(syntax::by_name(name).ok_or_else(|| {
            let names: Vec<&str> = syntax::REGISTRY.iter().map(|s| s.name).collect();
            CliError::new(
                "invalid_request",
                format!("unknown syntax `{name}`; known: auto, {}", names.join(", ")),
            )
        })?),
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
        thinking: matches!(args.thinking, OnOff::On),
        reasoning_format: match args.reasoning_format {
            Format::None => ReasoningFormat::None,
            Format::Auto => ReasoningFormat::Auto,
            Format::Deepseek => ReasoningFormat::Deepseek,
        },
        partial: args.partial,
        template: template.as_deref(),
    };
    let out = lenient::parse(&text, &opts).map_err(|e| {
        let kind = match e {
            ParseError::Truncated { .. } => "truncated",
            ParseError::UnknownTool(_) => "unknown_tool",
            ParseError::Malformed { .. } => "malformed_output",
        };
        CliError::new(kind, e.to_string())
    })?;
    say!("{}", message(&out))?;
    Ok(())
}

/// The assistant message, shaped like `toolgram call`'s (the runtime's one builder); a call
/// cut off keeps its partial arguments text and says `partial`.
fn message(out: &lenient::LenientOutput) -> Value {
    fn opt(s: &str) -> Option<&str> {
        (!s.is_empty()).then_some(s)
    }
    let calls: Vec<Value> = out
        .tool_calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id = if c.id.is_empty() {
                format!("call_{i}")
            } else {
                c.id.clone()
            };
            let arguments = match &c.partial_arguments {
                Some(text) => text.clone(),
                None => c.arguments.to_string(),
            };
            let mut v = openai_function_call(&id, &c.name, arguments);
            if c.partial {
                v["partial"] = json!(true);
            }
            v
        })
        .collect();
    let mut msg = openai_assistant_message(opt(&out.content), opt(&out.reasoning_content), calls);
    if !out.repairs.is_empty() {
        msg["toolgram"] = json!({"path": "lenient", "repairs": out.repairs});
    }
    msg
}
