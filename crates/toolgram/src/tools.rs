//! `toolgram tools list | grammar NAME | run NAME`: the built-in grammar tools, their
//! grammars in every format, and running one on an input text.

use crate::output::CliError;
use clap::{Subcommand, ValueEnum};
use serde_json::json;
use std::io::Read;
use std::path::PathBuf;
use toolgram_tools::{DynTool, Format, RunContext, ToolError, builtin, names};

#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// llguidance Lark (embedded engine).
    Lark,
    /// Lark for OpenAI custom tools.
    LarkOpenai,
    /// GBNF (llama.cpp, llama-server).
    Gbnf,
    /// The JSON fallback function tool.
    JsonSchema,
}

#[derive(Subcommand)]
pub enum ToolsCommand {
    /// List the built-in grammar tools (one JSON object per line).
    List,
    /// Print a tool's grammar.
    Grammar {
        /// Tool name.
        name: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "lark")]
        format: FormatArg,
    },
    /// Run a tool on an input text in its grammar; prints a JSON result.
    Run {
        /// Tool name.
        name: String,
        /// File with the input text, or `-` for stdin.
        #[arg(long)]
        input: String,
        /// Workspace root for tools that touch files.
        #[arg(long)]
        root: Option<PathBuf>,
        /// Database for tools that query one.
        #[arg(long)]
        db: Option<PathBuf>,
    },
}

fn tool(name: &str) -> anyhow::Result<Box<dyn DynTool>> {
    builtin(name).ok_or_else(|| {
        CliError::new(
            "invalid_request",
            format!(
                "no grammar tool `{name}`; the tools are: {}",
                names().join(", ")
            ),
        )
        .into()
    })
}

fn tool_err(e: ToolError) -> anyhow::Error {
    let kind = match e {
        ToolError::Syntax { .. } => "invalid_input",
        ToolError::Input(_) => "invalid_input",
        ToolError::Grammar(_) => "internal_error",
        ToolError::Run(_) => "run_error",
    };
    CliError::new(kind, e.to_string()).into()
}

pub fn run(cmd: ToolsCommand) -> anyhow::Result<()> {
    match cmd {
        ToolsCommand::List => {
            for name in names() {
                let t = tool(name)?;
                println!(
                    "{}",
                    json!({"name": t.name(), "description": t.description()})
                );
            }
        }
        ToolsCommand::Grammar { name, format } => {
            let format = match format {
                FormatArg::Lark => Format::Lark,
                FormatArg::LarkOpenai => Format::LarkOpenai,
                FormatArg::Gbnf => Format::Gbnf,
                FormatArg::JsonSchema => Format::JsonSchema,
            };
            print!("{}", tool(&name)?.format(format).map_err(tool_err)?);
        }
        ToolsCommand::Run {
            name,
            input,
            root,
            db,
        } => {
            let t = tool(&name)?;
            let mut text = String::new();
            if input == "-" {
                std::io::stdin().read_to_string(&mut text)?;
            } else {
                text = std::fs::read_to_string(&input)
                    .map_err(|e| CliError::new("io_error", format!("cannot read {input}: {e}")))?;
            }
            let ctx = RunContext {
                root,
                db,
                ..RunContext::default()
            };
            let text = text.strip_suffix('\n').unwrap_or(&text);
            let result = t.run_text(text, &ctx).map_err(tool_err)?;
            println!("{}", json!({"tool": t.name(), "result": result}));
        }
    }
    Ok(())
}
