//! `toolgram tools list | grammar NAME | run NAME`: the built-in grammar tools (or one loaded
//! from a manifest, NAME ending `.toml`), their grammars in every format, and running one on
//! an input text.

use crate::output::{CliError, read_text, say, say_raw};
use clap::{Subcommand, ValueEnum};
use serde_json::json;
use std::io::Read;
use std::path::PathBuf;
use toolgram_tools::{BuildOptions, DynTool, Format, RunContext, ToolError, load, names};

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum FormatArg {
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
pub(crate) enum ToolsCommand {
    /// List the built-in grammar tools (one JSON object per line).
    List,
    /// Print a tool's grammar.
    Grammar {
        /// Tool name, or a tool manifest (`….toml`).
        name: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "lark")]
        format: FormatArg,
        /// SQLite database (`sql_query` is generated from its schema).
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// Run a tool on an input text in its grammar; prints a JSON result.
    Run {
        /// Tool name, or a tool manifest (`….toml`).
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

fn tool(name: &str, db: Option<PathBuf>) -> anyhow::Result<Box<dyn DynTool>> {
    load(name, &BuildOptions { db }).map_err(tool_err)
}

fn tool_err(e: ToolError) -> anyhow::Error {
    let kind = match e {
        ToolError::Syntax { .. } => "invalid_input",
        ToolError::Input(_) => "invalid_input",
        ToolError::Grammar(_) => "internal_error",
        ToolError::Definition(_) => "invalid_tool",
        ToolError::Run(_) => "run_error",
    };
    CliError::new(kind, e.to_string()).into()
}

pub(crate) fn run(cmd: ToolsCommand) -> anyhow::Result<()> {
    match cmd {
        ToolsCommand::List => {
            for name in names() {
                match tool(name, None) {
                    Ok(t) => say!(
                        "{}",
                        json!({"name": t.name(), "description": t.description()})
                    )?,
                    Err(_) => say!(
                        "{}",
                        json!({"name": name, "needs": "--db FILE (its grammar is generated from the database)"})
                    )?,
                }
            }
        }
        ToolsCommand::Grammar { name, format, db } => {
            let format = match format {
                FormatArg::Lark => Format::Lark,
                FormatArg::LarkOpenai => Format::LarkOpenai,
                FormatArg::Gbnf => Format::Gbnf,
                FormatArg::JsonSchema => Format::JsonSchema,
            };
            say_raw!("{}", tool(&name, db)?.format(format).map_err(tool_err)?)?;
        }
        ToolsCommand::Run {
            name,
            input,
            root,
            db,
        } => {
            let t = tool(&name, db.clone())?;
            let mut text = String::new();
            if input == "-" {
                std::io::stdin().read_to_string(&mut text)?;
            } else {
                text = read_text(std::path::Path::new(&input), "input")?;
            }
            let ctx = RunContext {
                root,
                db,
                ..RunContext::default()
            };
            let text = text.strip_suffix('\n').unwrap_or(&text);
            let result = t.run_text(text, &ctx).map_err(tool_err)?;
            say!("{}", json!({"tool": t.name(), "result": result}))?;
        }
    }
    Ok(())
}
