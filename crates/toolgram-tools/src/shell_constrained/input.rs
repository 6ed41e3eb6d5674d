//! The typed input of the tool: the command its grammar's parse tree reads into, which the
//! executor runs and the emitter writes back as text.
//!
//! This module must not parse text or run anything.

use serde::{Deserialize, Serialize};

/// One option: a flag and, for `-n`, `-name`, `-type`, its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opt {
    /// The flag as written (`-l`, `-n`, `-name`, …).
    pub flag: String,
    /// Its value, if it takes one (quotes removed).
    pub value: Option<String>,
}

/// The typed input: a program, its options and its operands (paths, or a grep pattern first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    /// `ls`, `cat`, `head`, `tail`, `wc`, `grep` or `find`.
    pub program: String,
    /// Options, in order.
    pub options: Vec<Opt>,
    /// Operands, in order (for `grep`, the pattern first).
    pub operands: Vec<String>,
}
