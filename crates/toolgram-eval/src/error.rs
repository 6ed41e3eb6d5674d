//! How an evaluation fails before it can score anything: missing or malformed data, an
//! unwritable output folder, a model that cannot be loaded or a provider not configured. A miss on one item (or a schema refused) is not an error: it is that
//! item's verdict.
//!
//! This module must not print.

use std::path::{Path, PathBuf};

/// An evaluation that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// A data file is malformed.
    #[error("{}:{line}: {message}", file.display())]
    Data {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The data folder has no file for a category.
    #[error("no BFCL_v<N>_{category}.json in {}", dir.display())]
    NoCategory {
        /// The folder.
        dir: PathBuf,
        /// The category asked for.
        category: String,
    },
    /// The request asks for something this evaluation does not do.
    #[error("{0}")]
    Unsupported(String),
    /// The run stage could not start (model fetch or load, provider configuration).
    #[error(transparent)]
    Run(#[from] toolgram_runtime::RunError),
    /// A grammar tool could not be built or refused an input.
    #[error(transparent)]
    Tool(#[from] toolgram_tools::ToolError),
    /// A benchmark's input file is malformed (`file`: what is wrong).
    #[error("{}: {message}", file.display())]
    Input {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl EvalError {
    pub(crate) fn io(path: &Path, e: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}
