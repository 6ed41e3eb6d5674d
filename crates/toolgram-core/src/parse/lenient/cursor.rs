//! What every family's reader shares: the call read ([`RawCall`]), how a read fails
//! ([`Fail`]), the reading context (the tools' schemas, the repairs made) and the cursor over
//! the text, and the constructors of whole and truncated calls.
//!
//! The family readers ([`super::families`], [`super::pythonic`], [`super::tagged`],
//! [`super::xml`], [`super::harmony`]) build on it; it must not import them.

use super::values;
use crate::define::tool::Tool;
use crate::syntax::Piece;
use serde_json::{Map, Value};

/// A call read from free text.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCall {
    /// The id the model wrote, if any (`""` otherwise).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments object (the complete part only, when partial).
    pub arguments: Value,
    /// The text stops inside this call.
    pub partial: bool,
    /// For a partial call: the arguments as JSON text so far.
    pub partial_arguments: Option<String>,
}

/// Why a call region could not be read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fail {
    /// Not this family's call at this offset.
    NoMatch,
    /// The text ends inside a call; the calls read so far and the partial one, if named.
    Truncated(Vec<RawCall>),
    /// A call names a tool that is not offered.
    UnknownTool(String),
}

/// What the readers need besides the text.
pub(crate) struct Ctx<'a> {
    pub tools: Option<&'a [Tool]>,
    pub repairs: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn check(&self, name: &str) -> Result<(), Fail> {
        match self.tools {
            Some(tools) if !tools.iter().any(|t| t.name == name) => {
                Err(Fail::UnknownTool(name.to_owned()))
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn schema(&self, name: &str) -> Option<&'a Value> {
        self.tools?
            .iter()
            .find(|t| t.name == name)
            .map(|t| &t.parameters)
    }

    pub(crate) fn note(&mut self, what: impl Into<String>) {
        let what = what.into();
        if !self.repairs.contains(&what) {
            self.repairs.push(what);
        }
    }
}

/// A position in the text.
pub(crate) struct Cur<'a> {
    pub text: &'a str,
    pub pos: usize,
}

impl<'a> Cur<'a> {
    pub(crate) fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }

    pub(crate) fn ws(&mut self) {
        let r = self.rest();
        self.pos += r.len() - r.trim_start().len();
    }

    pub(crate) fn at_end(&self) -> bool {
        self.rest().is_empty()
    }

    /// Eat `m` (after whitespace); `true` if it was there (or empty).
    pub(crate) fn eat(&mut self, m: &str) -> bool {
        // A marker that starts with whitespace (Muse Glimmer's ` to=`) is matched as written.
        if !m.is_empty() && self.rest().starts_with(m) {
            self.pos += m.len();
            return true;
        }
        let save = self.pos;
        self.ws();
        if self.rest().starts_with(m) {
            self.pos += m.len();
            true
        } else {
            self.pos = save;
            false
        }
    }

    /// Whether the rest is a proper prefix of `m` (the text stops inside the marker).
    pub(crate) fn inside(&self, m: &str) -> bool {
        let r = self.rest().trim_start();
        !r.is_empty() && r.len() < m.len() && m.starts_with(r)
    }

    /// Text up to `end` (exclusive), moving past `end`; `None` when `end` never comes.
    pub(crate) fn until(&mut self, end: &str) -> Option<&'a str> {
        let r = self.rest();
        let i = r.find(end)?;
        self.pos += i + end.len();
        Some(&r[..i])
    }

    /// Eat each non-blank piece in order; `true` if all were there.
    pub(crate) fn eat_pieces(&mut self, pieces: &[Piece]) -> bool {
        pieces
            .iter()
            .map(|p| p.text().trim())
            .filter(|t| !t.is_empty())
            .all(|t| self.eat(t))
    }
}

/// A plausible tool name: no spaces, no markup.
pub(crate) fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_alphanumeric() || "_-.:/".contains(c))
}

pub(crate) fn call(id: String, name: String, arguments: Value, ctx: &mut Ctx) -> RawCall {
    let arguments = values::coerce_arguments(arguments, ctx.schema(&name), &mut ctx.repairs);
    RawCall {
        id,
        name,
        arguments,
        partial: false,
        partial_arguments: None,
    }
}

pub(crate) fn partial_call(id: String, name: String, args_text: &str) -> RawCall {
    RawCall {
        id,
        name,
        arguments: Value::Object(Map::new()),
        partial: true,
        partial_arguments: Some(args_text.trim().to_owned()),
    }
}
