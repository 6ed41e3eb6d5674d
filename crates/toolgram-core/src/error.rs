//! Typed errors of the pure pipeline: definitions, compilation and parsing.
//!
//! Every error says where (tool, JSON pointer, offset) and why; none of them panics or
//! loses the input that caused it.

use thiserror::Error;

/// A tool definition that cannot be used, found when the tool set is read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}at {pointer}: {message}", tool.as_ref().map(|t| format!("tool `{t}` ")).unwrap_or_default())]
pub struct DefinitionError {
    /// The tool's name, when it is known.
    pub tool: Option<String>,
    /// JSON pointer into the tools document.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl DefinitionError {
    pub(crate) fn new(
        tool: Option<&str>,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            tool: tool.map(str::to_owned),
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// A request that cannot be compiled into a grammar.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CompileError {
    /// `tool_choice` names a tool that is not in the pool.
    #[error("tool_choice names `{0}`, which is not among the tools")]
    UnknownTool(String),
    /// `tool_choice` needs a call but the pool is empty.
    #[error("tool_choice `{0}` needs at least one tool, but the pool is empty")]
    EmptyPool(String),
    /// A grammar tool's grammar cannot be read (it was checked when the tools were read).
    #[error("grammar tool: {0}")]
    ToolGrammar(String),
    /// A schema keyword toolgram does not know: refused by name rather than dropped
    /// (`lenient` lists it instead).
    #[error(
        "tool `{tool}` at {pointer}: unsupported keyword `{keyword}` (refused rather than ignored; --lenient lists it as a warning instead)"
    )]
    UnsupportedKeyword {
        /// The tool.
        tool: String,
        /// JSON pointer into its parameters.
        pointer: String,
        /// The keyword.
        keyword: String,
    },
    /// A tool's argument schema cannot be compiled by toolgram's own schema compiler (used
    /// when llguidance's `%json` refuses it).
    #[error("{0}")]
    ArgumentSchema(#[from] toolgram_grammar::schema::SchemaError),
}

/// Model output that does not read as the expected calls.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// The text stops inside a call: never presented as a call.
    #[error("output ends inside a tool call: {partial:?}")]
    Truncated {
        /// Everything the model wrote.
        partial: String,
    },
    /// The text is not in the call syntax at `offset`.
    #[error("malformed tool call at byte {offset}: {message}")]
    Malformed {
        /// Byte offset into the output.
        offset: usize,
        /// What was expected.
        message: String,
    },
    /// A call names a tool outside the allowed pool.
    #[error("call to unknown tool `{0}`")]
    UnknownTool(String),
}

impl ParseError {
    /// The stable machine-readable kind: `truncated`, `malformed_output`, `unknown_tool`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Truncated { .. } => "truncated",
            Self::Malformed { .. } => "malformed_output",
            Self::UnknownTool(_) => "unknown_tool",
        }
    }
}
