//! The one definition of a grammar tool ([`GrammarTool`]) and everything derived from it:
//! the parser, the grammar in every format, the JSON fallback shape. It holds no tool.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;
use toolgram_grammar::lark::{self, LarkDialect};
use toolgram_grammar::tree::{ParseTree, TreeError, parse_tree};
use toolgram_grammar::{Grammar, gbnf};

/// Why a grammar tool refused or failed.
#[derive(Debug, Error)]
pub enum ToolError {
    /// The text is not in the tool's grammar.
    #[error(
        "input is not in the tool's grammar: it stops fitting at line {line}, column {column}, at {near:?}"
    )]
    Syntax {
        /// How far (bytes) the grammar followed the text.
        offset: usize,
        /// Where that is: 1-based line and column (in characters).
        line: usize,
        /// See `line`.
        column: usize,
        /// The text from there to the end of its line (at most 40 characters).
        near: String,
    },
    /// A tool's definition (a manifest, its grammar file, a database to read) is wrong, or
    /// no tool has that name.
    #[error("{0}")]
    Definition(String),
    /// The tool's own grammar cannot be read (a bug in the tool).
    #[error("the tool's grammar: {0}")]
    Grammar(String),
    /// The input parses but cannot be run (bad values, division by zero, …).
    #[error("{0}")]
    Input(String),
    /// Running failed.
    #[error("{0}")]
    Run(String),
}

impl ToolError {
    /// `e`, from parsing `text`, said with the place in the text.
    pub fn from_tree(e: TreeError, text: &str) -> Self {
        match e {
            TreeError::NoMatch { offset } => {
                let before = text.get(..offset).unwrap_or(text);
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                let rest = text.get(offset..).unwrap_or("");
                Self::Syntax {
                    offset,
                    line: before.matches('\n').count() + 1,
                    column: before[line_start..].chars().count() + 1,
                    near: rest.lines().next().unwrap_or("").chars().take(40).collect(),
                }
            }
            other => Self::Grammar(other.to_string()),
        }
    }
}

/// Texts a tool's grammar must accept and refuse (test data every registered tool declares).
#[derive(Debug, Clone, Copy)]
pub struct Samples {
    /// Inputs the grammar and the parser accept.
    pub accepted: &'static [&'static str],
    /// Inputs the grammar refuses.
    pub refused: &'static [&'static str],
}

/// Where and how a tool may run.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// Workspace root for tools that touch files.
    pub root: Option<PathBuf>,
    /// Database for tools that query one.
    pub db: Option<PathBuf>,
    /// Longest a run may take.
    pub timeout: Duration,
    /// Most bytes of output kept.
    pub max_output: usize,
}

impl Default for RunContext {
    fn default() -> Self {
        Self {
            root: None,
            db: None,
            timeout: Duration::from_secs(10),
            max_output: 64 * 1024,
        }
    }
}

/// The forms a tool's input grammar is printed in (the same as `toolgram grammar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// llguidance Lark (the embedded engine).
    Lark,
    /// Lark as OpenAI's custom tools take it.
    LarkOpenai,
    /// GBNF (llama.cpp, llama-server).
    Gbnf,
    /// The JSON fallback: the tool as a JSON-Schema function.
    JsonSchema,
}

/// One grammar tool, declared once.
pub trait GrammarTool {
    /// The executor's typed input.
    type Input: std::fmt::Debug + Clone + PartialEq + serde::Serialize + serde::de::DeserializeOwned;
    /// The tool's name.
    fn name(&self) -> &str;
    /// What it does, for the model (the grammar is appended in the JSON fallback).
    fn description(&self) -> String;
    /// THE grammar, in Lark as core's reader takes it; `start` is the start rule.
    fn lark(&self) -> String;
    /// A parse of the grammar → the typed input.
    fn input_from_tree(&self, tree: &ParseTree, src: &str) -> Result<Self::Input, ToolError>;
    /// The typed input → canonical text in the grammar.
    fn emit(&self, input: &Self::Input) -> String;
    /// Run it.
    fn run(&self, input: &Self::Input, ctx: &RunContext) -> Result<Value, ToolError>;

    /// What the executor refuses beyond the grammar, found without running (a context-free
    /// grammar cannot tie a query's columns to the tables it names later). Run by `run` too;
    /// given to the validator so the model hears of it before anything runs.
    fn check(&self, _input: &Self::Input) -> Result<(), ToolError> {
        Ok(())
    }

    /// The grammar as IR.
    fn grammar(&self) -> Result<Grammar, ToolError> {
        lark::parse(&self.lark()).map_err(|e| ToolError::Grammar(e.to_string()))
    }

    /// Text from outside the grammar (a hand-written input, an unconstrained model's output)
    /// rewritten into the grammar's exact form, where the tool's reference reader is known to
    /// be more tolerant than its grammar (padding around markers, a wrapper). Tried only after
    /// the grammar refused the text as it is, and its result goes through the same grammar.
    fn lenient_rewrite(&self, _text: &str) -> Option<String> {
        None
    }

    /// Text → typed input, with the grammar as the parser (then [`Self::lenient_rewrite`]).
    fn parse(&self, text: &str) -> Result<Self::Input, ToolError> {
        let grammar = self.grammar()?;
        match parse_tree(&grammar, text) {
            Ok(tree) => self.input_from_tree(&tree, text),
            Err(strict) => match self.lenient_rewrite(text) {
                Some(fixed) if fixed != text => match parse_tree(&grammar, &fixed) {
                    Ok(tree) => self.input_from_tree(&tree, &fixed),
                    Err(_) => Err(ToolError::from_tree(strict, text)),
                },
                _ => Err(ToolError::from_tree(strict, text)),
            },
        }
    }

    /// The JSON fallback: one string property holding text in the grammar.
    fn json_fallback_schema(&self) -> Value {
        json!({"type": "object", "properties": {"input": {"type": "string",
            "description": format!("Text in this Lark grammar:\n{}", self.lark())}},
            "required": ["input"], "additionalProperties": false})
    }

    /// JSON fallback arguments → typed input (the same parser as the grammar form).
    fn input_from_json(&self, args: &Value) -> Result<Self::Input, ToolError> {
        let text = args
            .get("input")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::Input("expected {\"input\": \"…\"}".into()))?;
        self.parse(text)
    }

    /// The grammar (or the JSON fallback tool) in `format`.
    fn format(&self, format: Format) -> Result<String, ToolError> {
        Ok(match format {
            Format::Lark => lark::emit(&self.grammar()?, LarkDialect::Llguidance),
            Format::LarkOpenai => lark::emit(&self.grammar()?, LarkDialect::OpenAi),
            Format::Gbnf => gbnf::emit(&self.grammar()?),
            Format::JsonSchema => serde_json::to_string_pretty(&json!({"type": "function",
                "function": {"name": self.name(), "description": self.description(),
                    "parameters": self.json_fallback_schema()}}))
            .map_err(|e| ToolError::Grammar(e.to_string()))?,
        })
    }
}

/// A grammar tool behind a uniform, object-safe face (for the CLI and registries).
pub trait DynTool: Send + Sync {
    /// The tool's name.
    fn name(&self) -> &str;
    /// What it does.
    fn description(&self) -> String;
    /// The grammar as written by the tool's author (Lark), the definition a model reads.
    fn lark_source(&self) -> String;
    /// The grammar in `format`.
    fn format(&self, format: Format) -> Result<String, ToolError>;
    /// Parse text into the typed input, as JSON.
    fn parse_to_json(&self, text: &str) -> Result<Value, ToolError>;
    /// Parse and run text in the grammar.
    fn run_text(&self, text: &str, ctx: &RunContext) -> Result<Value, ToolError>;
    /// Parse text and check it as the executor would before running ([`GrammarTool::check`]).
    fn check_text(&self, text: &str) -> Result<(), ToolError>;
}

impl<T: GrammarTool + Send + Sync> DynTool for T {
    fn name(&self) -> &str {
        GrammarTool::name(self)
    }
    fn description(&self) -> String {
        GrammarTool::description(self)
    }
    fn lark_source(&self) -> String {
        self.lark()
    }
    fn format(&self, format: Format) -> Result<String, ToolError> {
        GrammarTool::format(self, format)
    }
    fn parse_to_json(&self, text: &str) -> Result<Value, ToolError> {
        let input = self.parse(text)?;
        serde_json::to_value(input).map_err(|e| ToolError::Input(e.to_string()))
    }
    fn run_text(&self, text: &str, ctx: &RunContext) -> Result<Value, ToolError> {
        let input = self.parse(text)?;
        self.run(&input, ctx)
    }
    fn check_text(&self, text: &str) -> Result<(), ToolError> {
        self.check(&self.parse(text)?)
    }
}
