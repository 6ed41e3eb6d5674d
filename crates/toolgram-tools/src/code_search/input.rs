//! The typed input of the tool: the query its grammar's parse tree reads into, which the
//! executor runs and the emitter writes back as text.
//!
//! This module must not parse text or run anything.

use serde::{Deserialize, Serialize};

/// One term of a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Term {
    /// A word that must appear (any case).
    Word(String),
    /// Text that must appear exactly.
    Exact(String),
    /// A regular expression that must match.
    Regex(String),
    /// A filter `key:value`.
    Filter {
        /// `def`, `type`, `lang` or `path`.
        key: String,
        /// Its value.
        value: String,
    },
}

/// The typed input: the terms, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// The terms.
    pub terms: Vec<Term>,
}
