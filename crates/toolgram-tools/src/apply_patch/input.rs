//! The typed input of the tool: the patch its grammar's parse tree reads into, which the
//! executor runs and the emitter writes back as text.
//!
//! This module must not parse text or run anything.

use serde::{Deserialize, Serialize};

/// What a chunk line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LineKind {
    /// ` ` context, kept.
    Context,
    /// `-` removed.
    Remove,
    /// `+` added.
    Add,
}

/// One chunk of an update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// The `@@` anchor line (text after `@@ `), if any.
    pub anchor: Option<String>,
    /// Whether the chunk was opened by `@@` (always, but for the first chunk).
    pub header: bool,
    /// The lines.
    pub lines: Vec<(LineKind, String)>,
    /// `*** End of File`: the chunk ends at the end of the file.
    pub end_of_file: bool,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FileOp {
    /// A new file with these lines.
    Add {
        /// Where.
        path: String,
        /// Its lines.
        lines: Vec<String>,
    },
    /// Remove a file.
    Delete {
        /// Which.
        path: String,
    },
    /// Change (and maybe move) a file.
    Update {
        /// Which.
        path: String,
        /// New name.
        move_to: Option<String>,
        /// The chunks, in file order.
        chunks: Vec<Chunk>,
    },
}

/// The typed input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Patch {
    /// The operations, in order.
    pub ops: Vec<FileOp>,
}
