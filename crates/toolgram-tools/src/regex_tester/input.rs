//! The typed input of the tool: the test its grammar's parse tree reads into, which the
//! executor runs and the emitter writes back as text.
//!
//! This module must not parse text or run anything.

use serde::{Deserialize, Serialize};

/// The typed input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Test {
    /// The regex, as written between the slashes (`\/` for a slash).
    pub pattern: String,
    /// Flags: `i` (case-insensitive), `m` (multi-line), `s` (dot matches newline), `x`.
    pub flags: String,
    /// The strings to try, quotes removed.
    pub strings: Vec<String>,
}
