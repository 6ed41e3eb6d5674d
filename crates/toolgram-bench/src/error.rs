//! How a benchmark fails before it can measure anything: malformed input, an unwritable
//! output, a model that cannot be loaded, a peer server that does not start. A schema refused
//! or a call that fails is not an error: it is that case's result.
//!
//! This module must not print.

use std::path::{Path, PathBuf};

/// A benchmark that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// An input file is malformed (`file`: what is wrong).
    #[error("{}: {message}", file.display())]
    Input {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The options ask for something this benchmark does not do.
    #[error("{0}")]
    Unsupported(String),
    /// The embedded engine failed.
    #[error(transparent)]
    Engine(#[from] toolgram_engine::EngineError),
    /// A model could not be resolved or fetched.
    #[error(transparent)]
    Fetch(#[from] toolgram_engine::models::FetchError),
    /// A tool pool did not compile.
    #[error(transparent)]
    Compile(#[from] toolgram_core::CompileError),
    /// A tool pool did not compile to the grammar IR.
    #[error(transparent)]
    IrCompile(#[from] toolgram_core::compile::ir::IrCompileError),
    /// A grammar tool could not be built or refused an input.
    #[error(transparent)]
    Tool(#[from] toolgram_tools::ToolError),
    /// A peer server (llama-server, `toolgram serve`) did not start or answered with an error.
    #[error("{0}")]
    Server(String),
}

impl BenchError {
    pub(crate) fn io(path: &Path, e: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}
