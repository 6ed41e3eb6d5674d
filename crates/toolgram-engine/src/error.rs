//! The engine's typed errors. Each has a stable `kind()` string for the CLI's
//! `{"error":{"type":…}}` line; none of them is a panic or an abort.

use thiserror::Error;
use toolgram_core::validate::ArgumentError;
use toolgram_core::{CompileError, DefinitionError};

/// Anything that can go wrong between a request and its calls.
#[derive(Debug, Error)]
pub enum EngineError {
    /// A tool definition is unusable.
    #[error("invalid tool definition: {0}")]
    Definition(#[from] DefinitionError),
    /// The request cannot be compiled (e.g. a named tool that does not exist).
    #[error("{0}")]
    Compile(#[from] CompileError),
    /// llguidance refused the compiled grammar.
    #[error("grammar rejected: {0}")]
    Grammar(String),
    /// llguidance cannot compile one tool's argument schema.
    #[error("tool `{tool}`: its parameters schema cannot be compiled into a grammar: {message}")]
    ToolSchema {
        /// The tool.
        tool: String,
        /// llguidance's reason.
        message: String,
    },
    /// The model file could not be loaded.
    #[error("cannot load model {path}: {reason}")]
    ModelLoad {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The chat template could not be compiled or rendered.
    #[error("{0}")]
    Template(String),
    /// The conversation does not fit the context window.
    #[error(
        "the prompt has {prompt_tokens} tokens; the context holds {n_ctx} (with room for at least one generated token): give a larger --ctx-size"
    )]
    ContextOverflow {
        /// Prompt length in tokens.
        prompt_tokens: usize,
        /// Context size.
        n_ctx: usize,
    },
    /// Generation stopped (max tokens or context, or a call repeating itself past hope)
    /// inside a call.
    #[error("generation stopped after {max_tokens} tokens inside a tool call{}", .repeated.as_ref().map_or_else(String::new, |r| format!(", which repeated one span {} times in a row (cut as at the token limit; `--repeated-text keep`, or a request's `repeated_text: \"keep\"`, lets it run)", r.copies)))]
    Truncated {
        /// Everything generated.
        partial: String,
        /// The tokens generated when it stopped (the limit, unless it repeated itself).
        max_tokens: usize,
        /// The span the call repeated, where that ended it before the limit.
        repeated: Option<crate::RepeatedText>,
        /// The tokens the cut attempt used (set once the session has counted them).
        usage: Option<toolgram_retry::Usage>,
    },
    /// The constraint reached a state with no allowed token, or rejected a token.
    #[error("constraint error: {0}")]
    Constraint(String),
    /// A limit of the grammar engine was reached while decoding (its lexer or parser grew too
    /// complex for the request's schema): the request's to simplify.
    #[error("{0}")]
    GrammarLimit(String),
    /// llama.cpp failed to evaluate a batch.
    #[error("llama.cpp decode failed: {0}")]
    Decode(String),
    /// Arguments failed post-parse validation.
    #[error("invalid arguments: {}", .0.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; "))]
    InvalidArguments(Vec<ArgumentError>),
    /// Unconstrained (prompt-mode) text that cannot be read as the calls it attempts.
    #[error("the reply is not a readable tool call ({message}): {raw:?}")]
    Unreadable {
        /// The text.
        raw: String,
        /// What is wrong with it.
        message: String,
    },
    /// A `logit_bias` id outside the model's vocabulary.
    #[error(
        "`logit_bias` names token {id}, outside this model's vocabulary of {n_vocab} tokens (ids 0 to {})",
        .n_vocab.saturating_sub(1)
    )]
    LogitBias {
        /// The id.
        id: u32,
        /// Tokens in the vocabulary.
        n_vocab: usize,
    },
    /// The caller cancelled the request (its client went away, or its time ran out).
    #[error("the request was cancelled")]
    Cancelled {
        /// The tokens used before it stopped (`None` when it never reached decoding).
        usage: Option<toolgram_retry::Usage>,
        /// The text decoded before it stopped (empty when it never reached decoding).
        partial: String,
    },
    /// The GPU offload asked for cannot be had (no GPU backend built, no such device, no GPU).
    #[error("{0}")]
    Gpu(String),
    /// A worker holding some of the model's layers (`--rpc`) cannot be reached, stopped
    /// answering or closed its connection.
    #[error("rpc worker {worker}: {reason}")]
    Worker {
        /// The worker, as given (`host:port`).
        worker: String,
        /// What happened.
        reason: String,
    },
    /// Every lane of a batch already has a session.
    #[error("all {lanes} lanes of the batch are in use")]
    Busy {
        /// Lanes of the batch.
        lanes: usize,
    },
    /// The grammar and the parser disagree: a bug, reported with the text.
    #[error("output accepted by the grammar but not by the parser ({reason}): {text:?}")]
    Internal {
        /// Parser's reason.
        reason: String,
        /// The text.
        text: String,
    },
}

impl EngineError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Definition(_) => "invalid_tools",
            Self::Compile(
                CompileError::UnsupportedKeyword { .. }
                | CompileError::ToolGrammar(_)
                | CompileError::ArgumentSchema(_),
            ) => "invalid_tools",
            Self::Compile(_) | Self::LogitBias { .. } => "invalid_request",
            Self::Grammar(_) => "grammar_error",
            Self::ToolSchema { .. } => "invalid_tools",
            Self::ModelLoad { .. } => "model_load_error",
            Self::Template(_) => "template_error",
            Self::ContextOverflow { .. } => "context_overflow",
            Self::Truncated { .. } => "truncated",
            Self::Constraint(_) => "constraint_error",
            Self::GrammarLimit(_) => "grammar_limit",
            Self::Decode(_) => "decode_error",
            Self::InvalidArguments(_) => "invalid_arguments",
            Self::Unreadable { .. } => "unreadable_reply",
            Self::Cancelled { .. } => "cancelled",
            Self::Gpu(_) => "gpu_unavailable",
            Self::Worker { .. } => "worker_unavailable",
            Self::Busy { .. } => "busy",
            Self::Internal { .. } => "internal_error",
        }
    }
}
