//! The call syntax to compile for a chat template, and how it was found: the registry entry
//! that reads back the call the template renders ([`super::probe`]); a syntax derived from the
//! rendered calls when no entry reads them ([`super::derive`]); the template source's
//! markers when it renders no call of its own, or when no syntax could be derived (said, and
//! marked `refused`: `toolgram syntax` fails on it, the engine goes on with those markers).
//! The reasoning block is the one the template writes around `reasoning_content`, and the
//! markers it writes around an answer's text are the syntax's text markers, not content
//! ([`super::turn`]), where it writes them. (A template known only by its source is
//! compiled by the engine's `template::detect_source`, then read here.) This module must not
//! probe or derive itself.

use super::TemplateRenderer;
use super::derive::{self, DeriveError};
use super::probe::probe_family;
use super::turn;
use crate::syntax::{self, CallBody, CallSyntax, text_of};
use std::sync::{Mutex, PoisonError};

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
/// rendered calls ([`super::derive`]) when no family reads them; the source's
/// markers when the template renders no call of its own — with the template's reasoning
/// and text markers where they differ from its own.
pub fn detect(template: &dyn TemplateRenderer, source: &str) -> Detection {
    with_template_turn(template, detect_calls(template, source))
}

/// Marker pairs as text: (opener, closer).
type Pair = Option<(String, String)>;

/// The syntax with its reasoning block as the template writes it, and the markers the
/// template writes around an answer's text as its `text_markers` ([`super::turn`]),
/// where those differ from the syntax's own (harmony's channels excepted): a leaked copy,
/// one per registry entry and spelling (a derived syntax is new on every detection, and so
/// is its copy).
fn with_template_turn(template: &dyn TemplateRenderer, mut found: Detection) -> Detection {
    let s = found.syntax;
    if s.body == CallBody::Harmony {
        return found;
    }
    let reasoning = turn::reasoning_markers(template)
        .filter(|(open, close)| !turn::same(&s.reasoning(), open, close));
    // Text markers that are the reasoning block's own belong to it, not to the text.
    let think = reasoning
        .clone()
        .unwrap_or_else(|| (text_of(s.reasoning().open), text_of(s.reasoning().close)));
    let default = (syntax::THINK.0.text(), syntax::THINK.1.text());
    let content = turn::content_markers(template).filter(|(open, close)| {
        let reasoning_marker = |m: &str| {
            [think.0.as_str(), think.1.as_str(), default.0, default.1]
                .iter()
                .any(|r| m.contains(r))
        };
        let known = s.noise.contains(&open.as_str()) && s.noise.contains(&close.as_str());
        !(known || reasoning_marker(open) || reasoning_marker(close))
    });
    if reasoning.is_none() && content.is_none() {
        return found;
    }
    type Copy = (&'static CallSyntax, Pair, Pair, &'static CallSyntax);
    static COPIES: Mutex<Vec<Copy>> = Mutex::new(Vec::new());
    let mut copies = COPIES.lock().unwrap_or_else(PoisonError::into_inner);
    let known = copies
        .iter()
        .find(|(from, r, c, _)| std::ptr::eq(*from, s) && *r == reasoning && *c == content);
    found.syntax = match known {
        Some((.., copy)) => copy,
        None => {
            let leak = |t: &str| -> &'static str { Box::leak(t.to_owned().into_boxed_str()) };
            let text_markers: &'static [&'static str] = match &content {
                Some((open, close)) => Box::leak(Box::new([leak(open), leak(close)])),
                None => s.text_markers,
            };
            let copy: &'static CallSyntax = Box::leak(Box::new(CallSyntax {
                think: match &reasoning {
                    Some((open, close)) => Some(turn::reasoning(open, close)),
                    None => s.think,
                },
                text_markers,
                ..*s
            }));
            copies.push((s, reasoning.clone(), content.clone(), copy));
            copy
        }
    };
    found.notable = true;
    if let Some((open, close)) = reasoning {
        found.how = format!(
            "{}; reasoning between {open:?} and {close:?}, as the template writes it",
            found.how
        );
    }
    if let Some((open, close)) = content {
        found.how = format!(
            "{}; an answer's text between {open:?} and {close:?}, which are not content",
            found.how
        );
    }
    found
}

fn detect_calls(template: &dyn TemplateRenderer, source: &str) -> Detection {
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
        None => match derive::derive(template) {
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
