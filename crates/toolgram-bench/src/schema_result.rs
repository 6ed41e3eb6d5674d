//! What `bench compile` reports for one schema ([`SchemaResult`], its `--details` line
//! [`SchemaDetail`]) and where a run is ([`CompileProgress`]): shared by the llguidance path
//! (`compile.rs`) and the IR targets (`compile_gbnf.rs`).
//!
//! This module must not compile or check a schema.

use crate::datasets::maskbench;
use serde::Serialize;
use std::path::Path;

/// Where a run is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileProgress {
    /// `done` of `total` schemas compiled and checked ([`Target::Lark`]).
    Checked {
        /// Schemas done.
        done: usize,
        /// Schemas in the run.
        total: usize,
    },
    /// Every schema compiled (the IR targets); `compiled` of `total` now go to `checker`.
    Compiled {
        /// Schemas whose grammar was written.
        compiled: usize,
        /// Schemas in the run.
        total: usize,
        /// The grammar engine that checks them (`llama.cpp`, `llguidance`).
        checker: &'static str,
    },
}

/// What happened to one schema.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchemaResult {
    /// Its subset.
    pub subset: String,
    /// Compiled (and, for the IR targets, accepted by the checking engine).
    pub compiled: bool,
    /// Why it was refused.
    pub refused_by: Option<String>,
    /// Compile time.
    pub compile_ms: f64,
    /// Valid instances accepted, of valid instances.
    pub valid: (usize, usize),
    /// Invalid instances rejected, of invalid instances.
    pub invalid: (usize, usize),
    /// Valid instances rejected only for key order or `1.0`-style integers (the output
    /// policies; counted as accepted by [`SchemaResult::passes`]).
    pub out_of_order_valid_rejected: usize,
    /// Valid instances the post-parse validator rejected.
    pub validator_rejected: usize,
    /// Unknown `format` values ignored (lenient).
    pub ignored_formats: usize,
    /// Unknown keywords ignored (lenient).
    pub ignored_keywords: usize,
    /// Where the grammar stopped on the first valid instance it rejected for a reason other
    /// than the output policies (byte offset into its compact JSON).
    pub valid_rejected_at: Option<usize>,
    /// llguidance's `%json` refused it and our own schema grammar ran instead.
    pub ir_fallback: bool,
}

impl SchemaResult {
    /// A result not yet compiled, in `subset`.
    pub(crate) fn new(subset: String) -> Self {
        Self {
            subset,
            ..Self::default()
        }
    }

    /// Compiled, every valid instance accepted (counting one rejected only for its key order
    /// as accepted under the order policy) and every invalid one rejected.
    pub fn passes(&self) -> bool {
        self.compiled
            && self.valid.0 + self.out_of_order_valid_rejected == self.valid.1
            && self.invalid.0 == self.invalid.1
    }

    /// The per-schema record of `--details`, for the file it came from.
    pub fn detail(&self, file: &Path) -> SchemaDetail {
        SchemaDetail {
            file: file.file_name().map(|n| n.to_string_lossy().into_owned()),
            compiled: self.compiled,
            refused_by: self.refused_by.clone(),
            passes: self.passes(),
            valid: [self.valid.0, self.valid.1],
            invalid: [self.invalid.0, self.invalid.1],
            order_only: self.out_of_order_valid_rejected,
            validator_rejected: self.validator_rejected,
            valid_rejected_at: self.valid_rejected_at,
            ir_fallback: self.ir_fallback,
            compile_ms: self.compile_ms,
        }
    }
}

/// One schema's line in `--details` (JSON lines).
#[derive(Debug, Clone, Serialize)]
pub struct SchemaDetail {
    /// The schema file's name.
    pub file: Option<String>,
    /// See [`SchemaResult::compiled`].
    pub compiled: bool,
    /// See [`SchemaResult::refused_by`].
    pub refused_by: Option<String>,
    /// See [`SchemaResult::passes`].
    pub passes: bool,
    /// Valid accepted, valid.
    pub valid: [usize; 2],
    /// Invalid rejected, invalid.
    pub invalid: [usize; 2],
    /// See [`SchemaResult::out_of_order_valid_rejected`].
    pub order_only: usize,
    /// See [`SchemaResult::validator_rejected`].
    pub validator_rejected: usize,
    /// See [`SchemaResult::valid_rejected_at`].
    pub valid_rejected_at: Option<usize>,
    /// See [`SchemaResult::ir_fallback`].
    pub ir_fallback: bool,
    /// See [`SchemaResult::compile_ms`].
    pub compile_ms: f64,
}

/// The result of a file that could not be read.
pub(crate) fn unreadable(path: &Path) -> SchemaResult {
    SchemaResult {
        refused_by: Some("unreadable file".into()),
        ..SchemaResult::new(maskbench::subset_of(&maskbench::file_name(path)))
    }
}
