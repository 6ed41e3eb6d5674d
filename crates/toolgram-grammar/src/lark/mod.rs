//! Lark: [`emit`] writes IR for llguidance ([`LarkDialect::Llguidance`]) or as fully
//! expanded Lark that OpenAI accepts for custom tools ([`LarkDialect::OpenAi`]: no
//! lookaround, lazy quantifiers, priorities, templates, `%declare` or `%import`); [`parse`]
//! reads the subset we emit and users write, within the bounds of [`MAX_NESTING`],
//! [`MAX_RULES`] and [`MAX_REF_DEPTH`]; [`Rhs`] and [`Rule`] build the Lark the IR has
//! no node for (a call union's slots), with literals escaped in one place ([`literal`]).
//!
//! This module must not compile grammars with llguidance: tests and the engine do that.

mod build;
mod limits;
mod read;
mod strings;
mod write;

pub use build::{Rhs, Rule, literal};
pub use limits::{MAX_NESTING, MAX_REF_DEPTH, MAX_RULES};
pub use read::parse;
pub use write::{Emit, Extern, emit, emit_named, emit_with};

/// Which Lark the writer targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LarkDialect {
    /// llguidance's Lark: `{m,n}` quantifiers and special-token references.
    Llguidance,
    /// The Lark OpenAI accepts for custom tools: plain Lark with `~ m..n` quantifiers.
    OpenAi,
}
