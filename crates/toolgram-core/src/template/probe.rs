//! Which registered call syntax a chat template writes, read from what it renders rather
//! than from its source text: a probe conversation whose assistant turn holds one call is
//! rendered through the template, and each registry entry's own reader (the lenient
//! parser, that family only) tries to read the probe call back from the assistant's turn.
//! Of the entries that read the call back (those needing no repair first), the one whose
//! markers cover most of the turn wins; where the template leaves that entry's calls
//! section open after the call, its section closer becomes optional.
//!
//! Templates build their markers from variables and loops, so markers in the source are a
//! weak signal (DeepSeek V3.2's DSML, Kimi K3, Seed-OSS beside Qwen3-Coder); the rendered
//! turn is what the model was trained on. This module must not compile or decode, nor
//! decide what to use when no entry reads the call ([`super::detect`] does).

use super::TemplateRenderer;
use crate::parse::lenient::{self, LenientOptions, SyntaxChoice};
use crate::syntax::{CallBody, CallSyntax, REGISTRY, text_of};
use crate::{ChatMessage, ToolSet};
use serde_json::{Value, json};
use std::sync::{Mutex, PoisonError};

/// The probe tool's name (no real tool is called this).
pub(crate) const PROBE_TOOL: &str = "get_probe_weather";

/// A text answer the probes render (no template writes it on its own).
pub(crate) const PROBE_ANSWER: &str = "Zq7 plain reply";

/// How every probe call id starts.
pub(crate) const PROBE_ID: &str = "pr0be123";

/// The probe's `n`-th call id.
pub(crate) fn probe_id(n: usize) -> String {
    format!("{PROBE_ID}{n}")
}

/// The probe calls' arguments: the first call's, then a second call's (the derivation
/// renders two).
pub(crate) fn probe_args(n: usize) -> Value {
    match n {
        0 => json!({"city": "Probeville", "days": 3}),
        _ => json!({"city": "Testburg", "days": 5}),
    }
}

/// The family the template writes calls in, if its rendered assistant
/// turn holds a call any registered family reads back exactly.
pub fn probe_family(template: &dyn TemplateRenderer) -> Option<&'static CallSyntax> {
    let (prompt, turn) = probe_turn(template)?;
    let want = probe_args(0);
    let tools = probe_tools()?;
    let mut best: Option<((bool, usize), &'static CallSyntax, String)> = None;
    for s in REGISTRY {
        // A family whose prompt opens the first call reads the turn after the prompt's
        // opener, and only where the prompt ends with it.
        let turn = match s.prompt_opens {
            Some(_) => {
                let open = text_of(s.call_open);
                if !prompt.ends_with(&open) {
                    continue;
                }
                format!("{open}{turn}")
            }
            None => turn.clone(),
        };
        let opts = LenientOptions {
            syntax: SyntaxChoice::Only(s),
            tools: Some(tools.tools()),
            ..LenientOptions::default()
        };
        let Ok(out) = lenient::parse(&turn, &opts) else {
            continue;
        };
        let read =
            matches!(out.tool_calls.as_slice(), [c] if c.name == PROBE_TOOL && c.arguments == want);
        let covered = markers(s)
            .filter(|m| turn.contains(m.as_str()))
            .map(|m| m.len())
            .sum();
        // A reader that needed no repairs first, then the one whose markers cover most.
        let score = (out.repairs.is_empty(), covered);
        if read && covered > 0 && best.as_ref().is_none_or(|(b, ..)| score > *b) {
            best = Some((score, s, turn));
        }
    }
    best.map(|(_, s, turn)| {
        let close = text_of(s.section_close);
        let opened = turn.contains(&text_of(s.section_open));
        match close.is_empty() || !opened || turn.contains(&close) {
            true => s,
            false => left_open(s),
        }
    })
}

/// `s` as a template that leaves the calls section open after a lone call writes it: the
/// same entry with its section closer optional. One copy per entry, so every detection of
/// the same template gives the same syntax.
fn left_open(s: &'static CallSyntax) -> &'static CallSyntax {
    static OPEN: Mutex<Vec<&'static CallSyntax>> = Mutex::new(Vec::new());
    let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = open.iter().find(|o| o.name == s.name) {
        return found;
    }
    let copy: &'static CallSyntax = Box::leak(Box::new(CallSyntax {
        section_close_optional: true,
        ..*s
    }));
    open.push(copy);
    copy
}

/// The marker texts of an entry, for measuring how much of a turn they explain.
fn markers(s: &CallSyntax) -> impl Iterator<Item = String> {
    let mut out = vec![
        text_of(s.section_open),
        text_of(s.section_close),
        text_of(s.call_open),
        text_of(s.call_close),
    ];
    match s.body {
        CallBody::Tagged {
            name_open,
            key_open,
            value_close,
            call_end,
            ..
        } => out.extend([name_open, key_open, value_close, call_end].map(str::to_owned)),
        CallBody::NameThenArgs {
            name_prefix,
            id_first,
            name_end,
            ..
        } => out.extend([name_prefix, id_first, name_end].map(str::to_owned)),
        CallBody::XmlElements {
            name_open,
            call_end,
            ..
        } => out.extend([name_open, call_end].map(str::to_owned)),
        CallBody::Json => out.push(format!("\"{}\"", s.args_key)),
        CallBody::JsonKeyed { name_key, .. } => out.push(format!("\"{name_key}\"")),
        _ => {}
    }
    out.into_iter().filter(|m| !m.trim().is_empty())
}

/// The probe tool: a city (string) and a number of days (integer).
pub fn probe_tools() -> Option<ToolSet> {
    let doc = json!([{"type": "function", "function": {"name": PROBE_TOOL,
        "description": "Weather forecast for a city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "days": {"type": "integer", "description": "Days ahead"}}, "required": ["city"]}}}]);
    ToolSet::from_json_str(&doc.to_string()).ok()
}

/// The probe conversation's generation prompt, and the assistant's turn holding the probe
/// call as the template renders it (from a little before where it departs from the bare
/// prompt, so a marker the prompt's end shares with the turn stays whole).
fn probe_turn(template: &dyn TemplateRenderer) -> Option<(String, String)> {
    if !template.renders_tools() && !template.renders_calls() {
        return None;
    }
    let tools = probe_tools()?;
    let user = json!({"role": "user", "content": "What will the weather be in Probeville?"});
    // Nine alphanumerics: Mistral's templates refuse other call ids.
    let call = json!({"id": "pr0be1234", "type": "function",
        "function": {"name": PROBE_TOOL, "arguments": probe_args(0).to_string()}});
    let msgs = |v: Vec<Value>| serde_json::from_value::<Vec<ChatMessage>>(Value::Array(v)).ok();
    // Templates that test the content's length want `""`; some write calls only when the
    // content is null.
    [json!(""), Value::Null].into_iter().find_map(|content| {
        let assistant =
            json!({"role": "assistant", "content": content, "tool_calls": [call.clone()]});
        let prompt = template
            .render_turns(&msgs(vec![user.clone()])?, &tools, true)
            .ok()?;
        let full = template
            .render_turns(&msgs(vec![user.clone(), assistant])?, &tools, false)
            .ok()?;
        let turn = assistant_turn(&prompt, &full).to_owned();
        turn.contains(PROBE_TOOL).then_some((prompt, turn))
    })
}

/// What `full` (a conversation ending with the assistant's message) adds to `prompt` (the
/// same conversation up to the assistant's turn), from where they part — or from the `<` of
/// a tag the two share the start of, so a marker stays whole (`<` + `｜tool▁calls▁begin｜>`).
pub fn assistant_turn<'a>(prompt: &str, full: &'a str) -> &'a str {
    let shared = prompt
        .char_indices()
        .zip(full.chars())
        .find(|((_, a), b)| a != b)
        .map_or(prompt.len().min(full.len()), |((i, _), _)| i);
    let before = &full[..shared];
    let from = match (before.rfind('<'), before.rfind('>')) {
        (Some(open), Some(close)) if open > close => open,
        (Some(open), None) => open,
        _ => shared,
    };
    &full[from..]
}
