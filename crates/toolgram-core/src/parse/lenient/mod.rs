//! Lenient reading of FREE (unconstrained) model output: reasoning, content and tool calls
//! in any registered family's native syntax ([`crate::syntax::REGISTRY`]), bare or fenced
//! JSON, with common slips repaired and every repair reported.
//!
//! It must NOT guess: text that stops inside a call is [`ParseError::Truncated`] (or, with
//! `partial`, a call marked partial); a call to a tool outside the given names is
//! [`ParseError::UnknownTool`]; call-like text inside a markdown code block is content. It
//! keeps no table of syntaxes of its own: every family comes from the registry.

mod cursor;
mod families;
mod harmony;
mod json_repair;
mod markers;
mod pythonic;
mod reasoning;
mod tagged;
mod values;
mod xml;

pub use cursor::RawCall as LenientCall;
pub use reasoning::ReasoningFormat;

use crate::define::tool::Tool;
use crate::error::ParseError;
use crate::syntax::{CallBody, CallSyntax, REGISTRY, Reasoning};
use cursor::{Ctx, Fail};
use families::{body_anchor, marker, read_calls};

/// Which syntaxes to try.
#[derive(Debug, Clone, Copy)]
pub enum SyntaxChoice {
    /// Every registered syntax, earliest call first.
    Auto,
    /// This family first; the others still read (free output drifts between syntaxes).
    Named(&'static CallSyntax),
    /// This family only (output a grammar of this family produced).
    Only(&'static CallSyntax),
}

/// How to read a reply.
#[derive(Debug, Clone, Copy)]
pub struct LenientOptions<'a> {
    /// The call syntax(es).
    pub syntax: SyntaxChoice,
    /// The offered tools: calls to others are errors, schemas type the values. `None`: any.
    pub tools: Option<&'a [Tool]>,
    /// The template was rendered with thinking on (the reply may start inside a block).
    pub thinking: bool,
    /// Where reasoning goes.
    pub reasoning_format: ReasoningFormat,
    /// The text may stop mid-call (streaming): return the call marked partial.
    pub partial: bool,
    /// The chat template the reply was generated under, when known: the markers it writes
    /// itself are never content.
    pub template: Option<&'a str>,
}

impl Default for LenientOptions<'_> {
    fn default() -> Self {
        Self {
            syntax: SyntaxChoice::Auto,
            tools: None,
            thinking: false,
            reasoning_format: ReasoningFormat::None,
            partial: false,
            template: None,
        }
    }
}

/// What a free reply says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LenientOutput {
    /// Text outside reasoning and calls, trimmed (empty if none).
    pub content: String,
    /// Extracted reasoning, trimmed (empty if none).
    pub reasoning_content: String,
    /// The calls, in order.
    pub tool_calls: Vec<LenientCall>,
    /// What had to be repaired to read them.
    pub repairs: Vec<String>,
}

fn candidates(choice: SyntaxChoice) -> Vec<&'static CallSyntax> {
    match choice {
        SyntaxChoice::Auto => REGISTRY.iter().collect(),
        SyntaxChoice::Only(s) => vec![s],
        SyntaxChoice::Named(s) => std::iter::once(s)
            .chain(REGISTRY.iter().filter(|r| !std::ptr::eq(*r, s)))
            .collect(),
    }
}

/// The reply with the opener a prompt wrote in front of it (functionary v3.2's `>>>`), so
/// that its first call or its text recipient reads as the ones after it.
pub(crate) fn reopened(text: &str, s: &CallSyntax) -> String {
    let open = crate::syntax::text_of(s.call_open);
    match s.prompt_opens {
        Some(_) if !text.trim().is_empty() && !text.trim_start().starts_with(&open) => {
            format!("{open}{}", text.trim_start())
        }
        _ => text.to_owned(),
    }
}

/// Where each candidate's calls may start: (offset, syntax), in text order.
fn anchors(text: &str, syntaxes: &[&'static CallSyntax]) -> Vec<(usize, &'static CallSyntax)> {
    let fences = fenced_ranges(text);
    let mut out = Vec::new();
    for s in syntaxes {
        let marks = [
            marker(&s.section_open[..s.section_open.len().min(1)]),
            marker(&s.call_open[..s.call_open.len().min(1)]),
        ];
        let body = body_anchor(s).map(str::to_owned);
        for m in marks.iter().chain(body.iter()).filter(|m| !m.is_empty()) {
            for (i, _) in text.match_indices(m.as_str()) {
                if !fences.iter().any(|(a, b)| *a < i && i < *b) {
                    out.push((i, *s));
                }
            }
        }
    }
    let order = |s: &CallSyntax| syntaxes.iter().position(|r| std::ptr::eq(*r, s));
    out.sort_by_key(|(i, s)| (*i, order(s)));
    out.dedup_by(|a, b| a.0 == b.0 && std::ptr::eq(a.1, b.1));
    out
}

/// Byte ranges of markdown code blocks that follow prose (explanations, not calls).
fn fenced_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut idx = text.match_indices("```").map(|(i, _)| i);
    while let (Some(a), Some(b)) = (idx.next(), idx.next()) {
        if !text[..a].trim_end().is_empty() {
            out.push((a, b + 3));
        }
    }
    out
}

/// Syntaxes whose calls may be bare JSON objects at the start of the reply.
fn bare_json(syntaxes: &[&'static CallSyntax]) -> Option<&'static CallSyntax> {
    syntaxes.iter().copied().find(|s| {
        s.body == CallBody::Json
            && (s.bare_calls || (s.section_open.is_empty() && s.call_open.is_empty()))
    })
}

/// Read a free reply.
#[allow(
    clippy::too_many_lines,
    reason = "the lenient reader's passes in the order they run, each a few lines"
)]
pub fn parse(text: &str, opts: &LenientOptions) -> Result<LenientOutput, ParseError> {
    let syntaxes = candidates(opts.syntax);
    let original = text;
    let mut cleaned = match opts.syntax {
        SyntaxChoice::Named(s) | SyntaxChoice::Only(s) => reopened(text, s),
        SyntaxChoice::Auto => text.to_owned(),
    };
    for n in syntaxes.iter().flat_map(|s| s.noise) {
        cleaned = cleaned.replace(n, "");
    }
    let text = cleaned.as_str();
    let mut markers: Vec<(String, String)> = syntaxes
        .iter()
        .filter_map(|s| s.think)
        .chain([Reasoning::THINK])
        .map(|r| (r.open_text(), r.close_text()))
        .collect();
    markers.dedup();
    let pairs: Vec<(&str, &str)> = markers
        .iter()
        .map(|(o, c)| (o.as_str(), c.as_str()))
        .collect();
    let harmony = match opts.syntax {
        SyntaxChoice::Named(s) | SyntaxChoice::Only(s) => s.body == CallBody::Harmony,
        SyntaxChoice::Auto => text.contains("<|channel|>") && text.contains("<|message|>"),
    };
    if harmony {
        let mut ctx = Ctx {
            tools: opts.tools,
            repairs: Vec::new(),
        };
        return match harmony::read(text, opts.reasoning_format, &mut ctx) {
            Ok(h) => Ok(LenientOutput {
                content: h.content.trim().to_owned(),
                reasoning_content: h.reasoning.trim().to_owned(),
                tool_calls: h.calls,
                repairs: ctx.repairs,
            }),
            Err(Fail::Truncated(calls)) => truncated(original, calls, opts, String::new(), ctx),
            Err(Fail::UnknownTool(n)) => Err(ParseError::UnknownTool(n)),
            Err(Fail::NoMatch) => Err(ParseError::Malformed {
                offset: 0,
                message: "harmony call arguments are not JSON".into(),
            }),
        };
    }
    let first_call = |t: &str| anchors(t, &syntaxes).first().map(|a| a.0);
    let mut split = reasoning::split(
        text,
        &pairs,
        opts.thinking,
        opts.reasoning_format,
        opts.template,
        first_call,
    );
    if opts.reasoning_format != ReasoningFormat::None {
        reasoning::later_blocks(&mut split, &pairs);
    }
    let rest = split.rest;
    // The template's markers, except reasoning markers while reasoning stays in content.
    let mut markers = opts
        .template
        .map(markers::template_markers)
        .unwrap_or_default();
    if opts.reasoning_format == ReasoningFormat::None {
        markers.retain(|m| {
            !pairs
                .iter()
                .any(|(o, c)| o.contains(m.as_str()) || c.contains(m.as_str()))
        });
    }
    // Close markers left in the text once reasoning is extracted are stray, not content.
    let stray: Vec<&str> = if opts.reasoning_format == ReasoningFormat::None {
        Vec::new()
    } else {
        pairs.iter().map(|(_, c)| *c).collect()
    };
    let mut ctx = Ctx {
        tools: opts.tools,
        repairs: Vec::new(),
    };
    let mut calls = Vec::new();
    let mut content = String::new();
    let mut pos = 0;
    let lead = rest.len() - rest.trim_start().len();
    let starts_json = rest[lead..].starts_with('{')
        || rest[lead..].starts_with("[{")
        || rest[lead..].starts_with("```json");
    if let (true, Some(s)) = (starts_json, bare_json(&syntaxes)) {
        match read_calls(&rest, lead, s, &mut ctx) {
            Ok((mut found, end)) => {
                calls.append(&mut found);
                pos = end;
            }
            Err(Fail::Truncated(partial)) => {
                return truncated(original, partial, opts, split.reasoning, ctx);
            }
            Err(Fail::UnknownTool(n)) => return Err(ParseError::UnknownTool(n)),
            Err(Fail::NoMatch) => {}
        }
    }
    let all = anchors(&rest, &syntaxes);
    let mut i = 0;
    while i < all.len() {
        let at = all[i].0;
        if at < pos {
            i += 1;
            continue;
        }
        let mut outcome: Option<Fail> = None;
        let mut done = None;
        while i < all.len() && all[i].0 == at {
            match read_calls(&rest, at, all[i].1, &mut ctx) {
                Ok(found) => {
                    done = Some(found);
                    break;
                }
                Err(Fail::Truncated(p)) => {
                    let better = match &outcome {
                        Some(Fail::Truncated(q)) => p.len() > q.len(),
                        _ => true,
                    };
                    if better {
                        outcome = Some(Fail::Truncated(p));
                    }
                }
                Err(f @ Fail::UnknownTool(_)) if !matches!(outcome, Some(Fail::Truncated(_))) => {
                    outcome = Some(f)
                }
                Err(_) => {}
            }
            i += 1;
        }
        match (done, outcome) {
            (Some((mut found, end)), _) => {
                content.push_str(&rest[pos..at]);
                calls.append(&mut found);
                pos = end;
            }
            (None, Some(Fail::Truncated(partial))) => {
                content.push_str(&rest[pos..at]);
                let mut all_calls = calls;
                all_calls.extend(partial);
                let mut out = truncated(original, all_calls, opts, split.reasoning, ctx)?;
                out.content = clean(&content, &syntaxes, &stray, &markers);
                return Ok(out);
            }
            (None, Some(Fail::UnknownTool(n))) => return Err(ParseError::UnknownTool(n)),
            (None, _) => {}
        }
        while i < all.len() && all[i].0 < pos {
            i += 1;
        }
    }
    content.push_str(&rest[pos.min(rest.len())..]);
    Ok(LenientOutput {
        content: clean(&content, &syntaxes, &stray, &markers),
        reasoning_content: split.reasoning.trim().to_owned(),
        tool_calls: calls,
        repairs: ctx.repairs,
    })
}

/// Text stopping inside a call: an error, or (streaming) the calls with the last partial.
fn truncated(
    text: &str,
    calls: Vec<LenientCall>,
    opts: &LenientOptions,
    reasoning: String,
    ctx: Ctx,
) -> Result<LenientOutput, ParseError> {
    if !opts.partial {
        return Err(ParseError::Truncated {
            partial: text.to_owned(),
        });
    }
    Ok(LenientOutput {
        content: String::new(),
        reasoning_content: reasoning.trim().to_owned(),
        tool_calls: calls,
        repairs: ctx.repairs,
    })
}

/// Content without the families' turn/channel markers and the template's own, trimmed.
fn clean(
    content: &str,
    syntaxes: &[&'static CallSyntax],
    stray: &[&str],
    template_markers: &[String],
) -> String {
    let mut out = markers::strip(content, template_markers);
    for m in stray {
        out = out.replace(m, "");
    }
    for s in syntaxes {
        for n in s.noise.iter().chain(s.text_markers) {
            out = out.replace(n, "");
        }
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests;
