//! The call syntax a chat template speaks, read from what it renders — beside the registry
//! ([`crate::syntax`]) it chooses from or adds to.
//!
//! # Contents
//!
//! | module | what it does |
//! |---|---|
//! | [`probe`] | which registry entry reads back the call the template renders |
//! | [`derive`] | a syntax derived from the one- and two-call renders when no entry reads them |
//! | [`turn`] | the markers the template writes around reasoning and around an answer's text |
//! | [`detect`] | the syntax to compile and how it was found: probed, derived, or from the source's markers |
//!
//! The template is reached only through [`TemplateRenderer`], so this crate stays free of a
//! Jinja engine: the engine's `ChatTemplate` (minijinja) implements it. Nothing here compiles
//! a grammar or decodes.

pub mod derive;
pub mod detect;
pub mod probe;
pub mod turn;

pub use detect::{Detection, detect};

use crate::{ChatMessage, ToolSet};

/// A chat template as the syntax readers need it: a conversation rendered, and what its
/// source says it renders.
pub trait TemplateRenderer {
    /// Whether the template renders a `tools` list itself.
    fn renders_tools(&self) -> bool;
    /// Whether the template writes an assistant message's `tool_calls` itself.
    fn renders_calls(&self) -> bool;
    /// `messages` with `tools` rendered (toolgram's generic spelling of calls where the
    /// template leaves them to it), with the assistant turn's opening at the end when `open`.
    fn render_turns(&self, messages: &[ChatMessage], tools: &ToolSet, open: bool) -> Rendered;
}

/// A rendered conversation, or why the template failed to render it.
pub type Rendered = Result<String, String>;
