//! Typed errors of the provider profiles: what a provider's JSON-Schema subset cannot say.
//!
//! Every error names the tool, the JSON pointer into its `parameters` and the keyword (or the
//! limit). This module must not decide policy; it only describes refusals.

use thiserror::Error;

/// A schema that cannot be rendered for a provider profile without losing a constraint.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProfileError {
    /// The profile name is not one of `openai-strict`, `anthropic`, `gemini`.
    #[error("unknown profile `{0}` (expected openai-strict, anthropic or gemini)")]
    UnknownProfile(String),
    /// A keyword (or shape) the provider cannot express, and which cannot be moved after the
    /// parse without narrowing or widening the schema unsoundly.
    #[error("tool `{tool}` at {pointer:?}: `{keyword}` cannot be rendered for {profile}: {reason}")]
    Unsupported {
        /// The provider profile.
        profile: &'static str,
        /// The tool.
        tool: String,
        /// JSON pointer into the tool's `parameters` (or the union schema).
        pointer: String,
        /// The keyword.
        keyword: String,
        /// Why.
        reason: String,
    },
    /// A call union was asked for an empty pool.
    #[error("the tool pool is empty: a call union needs at least one tool")]
    EmptyPool,
    /// A documented provider limit is exceeded.
    #[error("{scope}: {limit} is {value}, over {profile}'s limit of {max}")]
    OverLimit {
        /// The provider profile.
        profile: &'static str,
        /// `tool `name`` or `the tool pool`.
        scope: String,
        /// Which limit.
        limit: &'static str,
        /// What the schema has.
        value: usize,
        /// What the provider allows.
        max: usize,
    },
}
