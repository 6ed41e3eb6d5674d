//! The call syntax to compile for a chat template, and how it was found: the registry entry
//! that reads back the call the template renders ([`crate::syntax_probe`]); a syntax derived from the
//! rendered calls when no entry reads them ([`crate::syntax_derive`]); the template source's
//! markers when it renders no call of its own, or when no syntax could be derived (said, and
//! marked `refused`: `toolgram syntax` fails on it, the engine goes on with those markers).
//! The reasoning block is the one the template writes around `reasoning_content`
//! ([`crate::think_derive`]) where it writes one. [`detect_source`] does the same for a
//! template known only by its source (`toolgram parse --template`). This module must not
//! probe or derive itself.

use crate::syntax_derive::{self, DeriveError};
use crate::syntax_probe::probe_family;
use crate::template::ChatTemplate;
use crate::think_derive;
use std::sync::{Mutex, PoisonError};
use toolgram_core::syntax::{self, CallBody, CallSyntax};

/// The syntax to compile for a template and how it was found.
#[derive(Debug)]
pub struct Detection {
    /// The syntax.
    pub syntax: &'static CallSyntax,
    /// How it was found, in words.
    pub how: String,
    /// Whether a user should be told (a derived syntax, a refused derivation).
    pub notable: bool,
    /// The template writes calls no entry reads and no syntax could be derived from them.
    pub refused: bool,
}

/// The syntax to compile for a template: the probed family; a syntax derived from the
/// rendered calls ([`crate::syntax_derive`]) when no family reads them; the source's
/// markers when the template renders no call of its own.
pub fn detect(template: &ChatTemplate, source: &str) -> Detection {
    with_template_reasoning(template, detect_calls(template, source))
}

/// The syntax's reasoning block as the template writes it ([`crate::think_derive`]), where
/// that differs from the syntax's own (harmony's channels excepted): one leaked copy per
/// syntax and spelling.
fn with_template_reasoning(template: &ChatTemplate, mut found: Detection) -> Detection {
    let s = found.syntax;
    let Some((open, close)) = think_derive::markers(template) else {
        return found;
    };
    if s.body == CallBody::Harmony || think_derive::same(&s.reasoning(), &open, &close) {
        return found;
    }
    static COPIES: Mutex<Vec<(&'static CallSyntax, &'static CallSyntax)>> = Mutex::new(Vec::new());
    let mut copies = COPIES.lock().unwrap_or_else(PoisonError::into_inner);
    let copy = match copies.iter().find(|(from, copy)| {
        std::ptr::eq(*from, s) && think_derive::same(&copy.reasoning(), &open, &close)
    }) {
        Some((_, copy)) => *copy,
        None => {
            let copy: &'static CallSyntax = Box::leak(Box::new(CallSyntax {
                think: Some(think_derive::reasoning(&open, &close)),
                ..*s
            }));
            copies.push((s, copy));
            copy
        }
    };
    found.syntax = copy;
    found.notable = true;
    found.how = format!(
        "{}; reasoning between {open:?} and {close:?}, as the template writes it",
        found.how
    );
    found
}

fn detect_calls(template: &ChatTemplate, source: &str) -> Detection {
    let found = |syntax, how: String, notable| Detection {
        syntax,
        how,
        notable,
        refused: false,
    };
    match probe_family(template) {
        Some(s) => found(
            s,
            format!(
                "`{}`: its reader reads back the call the template writes{}",
                s.name,
                match s.section_close_optional {
                    true => ", which leaves the calls section open (its closer is optional)",
                    false => "",
                }
            ),
            s.section_close_optional,
        ),
        None => match syntax_derive::derive(template) {
            Ok(d) => found(
                d.syntax,
                format!("derived from the template: {}", d.how),
                true,
            ),
            Err(DeriveError::NoCalls) => {
                let s = syntax::detect(source);
                found(s, format!("`{}`: from the template's text", s.name), false)
            }
            Err(e) => {
                let s = syntax::detect(source);
                Detection {
                    refused: true,
                    ..found(
                        s,
                        format!("{e}; using `{}` from the template's text", s.name),
                        true,
                    )
                }
            }
        },
    }
}

/// [`detect`] for a template known only by its source (no model: no BOS or EOS text), as
/// `toolgram parse --template` finds it; a template that does not compile is read for its
/// markers alone (said, and notable).
pub fn detect_source(source: &str) -> Detection {
    match ChatTemplate::new(source, "", "") {
        Ok(template) => detect(&template, source),
        Err(e) => {
            let s = syntax::detect(source);
            Detection {
                syntax: s,
                how: format!(
                    "the chat template does not compile ({e}); `{}` from its text",
                    s.name
                ),
                notable: true,
                refused: false,
            }
        }
    }
}
