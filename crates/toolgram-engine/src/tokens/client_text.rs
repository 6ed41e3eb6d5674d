//! Control tokens only where the template puts them: special-token strings inside client text
//! (message content, tool results, call names and arguments, tool definitions) stay text.
//!
//! Before rendering, each such string in client text is replaced by an escape (a private-use
//! character, the string's index, the character again; the character itself is doubled), so
//! the rendered prompt holds the template's own markers as they are and the client's only
//! escaped. The prompt is then split at the special-token strings left in it, as llama.cpp
//! splits a prompt it parses for specials (longest token first, its `lstrip`/`rstrip`
//! attributes): those become their token, and each text between them is unescaped and
//! tokenized as text. llama.cpp matches user-defined tokens (Qwen's `<tool_call>`) even in
//! text, so a text is also cut inside each marker it holds. A prompt without special strings
//! in client text gets exactly llama.cpp's tokens. This module must not render or decode.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token_type::LlamaTokenAttr;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;
use toolgram_core::ChatMessage;
use toolgram_core::syntax::{self, CallSyntax, Piece};

/// Opens and closes an escaped special string in a rendered prompt.
const ESC: char = '\u{F0000}';

/// A token llama.cpp splits a prompt at when it parses specials.
struct Special {
    text: String,
    id: LlamaToken,
    lstrip: bool,
    rstrip: bool,
}

/// How client text is kept text in one model's prompts.
pub(crate) struct ClientText {
    /// Every token llama.cpp splits a prompt at, longest first.
    specials: Vec<Special>,
    /// The special strings client text must not produce, longest first: control tokens, and
    /// user-defined ones the template, the call syntax or a reasoning block uses.
    guarded: Vec<String>,
    /// Whether `guarded[i]` is user-defined (llama.cpp matches it in text too).
    in_text: Vec<bool>,
    /// Guarded strings an assistant's own text keeps (its reasoning markers, which templates
    /// split that text at).
    reasoning: Vec<String>,
    /// Bytes a guarded string may start with.
    first: [bool; 256],
}

impl ClientText {
    /// The specials of `model`, whose chat template is `source` and call syntax `syntax`.
    pub(crate) fn of_model(model: &LlamaModel, source: &str, syntax: &CallSyntax) -> Self {
        let vocab = model.vocab();
        let tokens = |pieces: &[Piece]| -> Vec<String> {
            pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Token(t) => Some((*t).to_owned()),
                    Piece::Text(_) => None,
                })
                .collect()
        };
        let r = syntax.reasoning();
        let reasoning: Vec<String> = [r.open, r.close, &[syntax::THINK.0, syntax::THINK.1]]
            .into_iter()
            .flat_map(tokens)
            .collect();
        let mut markers = tokens(&syntax.marker_pieces());
        markers.extend(reasoning.iter().cloned());
        let mut specials = Vec::new();
        let mut guarded = Vec::new();
        for t in vocab.tokens() {
            let attr = vocab.attr(t);
            let control =
                attr.contains(LlamaTokenAttr::Control) || attr.contains(LlamaTokenAttr::Unknown);
            let user = attr.contains(LlamaTokenAttr::UserDefined);
            if !control && !user {
                continue;
            }
            let Some(text) = vocab.text(t).map(|c| c.to_string_lossy().into_owned()) else {
                continue;
            };
            if text.is_empty() {
                continue;
            }
            if control || source.contains(&text) || markers.contains(&text) {
                guarded.push((text.clone(), user && !control));
            }
            specials.push(Special {
                text,
                id: t,
                lstrip: attr.contains(LlamaTokenAttr::LStrip),
                rstrip: attr.contains(LlamaTokenAttr::RStrip),
            });
        }
        Self::new(specials, guarded, reasoning)
    }

    fn new(
        mut specials: Vec<Special>,
        mut guarded: Vec<(String, bool)>,
        reasoning: Vec<String>,
    ) -> Self {
        specials.sort_by_key(|s| std::cmp::Reverse(s.text.len()));
        guarded.sort_by_key(|(t, _)| std::cmp::Reverse(t.len()));
        let mut first = [false; 256];
        for (t, _) in &guarded {
            first[usize::from(t.as_bytes()[0])] = true;
        }
        first[usize::from(ESC.to_string().as_bytes()[0])] = true;
        let (guarded, in_text) = guarded.into_iter().unzip();
        Self {
            specials,
            guarded,
            in_text,
            reasoning,
            first,
        }
    }

    /// `text` from a client with every guarded special string escaped; an assistant's own
    /// text (`assistant`) keeps its reasoning markers.
    pub(crate) fn escape<'t>(&self, text: &'t str, assistant: bool) -> Cow<'t, str> {
        let bytes = text.as_bytes();
        let esc = ESC.to_string();
        let mut out = String::new();
        let mut copied = 0;
        let mut i = 0;
        while i < bytes.len() {
            if !self.first[usize::from(bytes[i])] {
                i += 1;
                continue;
            }
            let rest = &bytes[i..];
            let hit = if rest.starts_with(esc.as_bytes()) {
                Some((None, esc.len()))
            } else {
                self.guarded
                    .iter()
                    .position(|g| {
                        rest.starts_with(g.as_bytes()) && !(assistant && self.reasoning.contains(g))
                    })
                    .map(|k| (Some(k), self.guarded[k].len()))
            };
            let Some((k, len)) = hit else {
                i += 1;
                continue;
            };
            out.push_str(&text[copied..i]);
            out.push(ESC);
            if let Some(k) = k {
                let _ = write!(out, "{k}");
            }
            out.push(ESC);
            i += len;
            copied = i;
        }
        if copied == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }

    /// `messages` with their client text escaped: content, reasoning, names, call ids, call
    /// names and arguments (read as JSON, so a `\u`-escaped marker is found too).
    pub(crate) fn escape_messages(&self, messages: &[ChatMessage]) -> Vec<ChatMessage> {
        let mut out = messages.to_vec();
        for m in &mut out {
            let assistant = m.role == "assistant";
            let fields = [&mut m.content, &mut m.reasoning_content, &mut m.name];
            for s in fields.into_iter().chain([&mut m.tool_call_id]).flatten() {
                self.escape_in_place(s, assistant);
            }
            for c in m.tool_calls.iter_mut().flatten() {
                self.escape_in_place(&mut c.id, assistant);
                self.escape_in_place(&mut c.function.name, assistant);
                match serde_json::from_str::<Value>(&c.function.arguments) {
                    Ok(mut v) => {
                        if self.escape_value(&mut v, assistant) {
                            c.function.arguments = v.to_string();
                        }
                    }
                    Err(_) => self.escape_in_place(&mut c.function.arguments, assistant),
                }
            }
        }
        out
    }

    fn escape_in_place(&self, s: &mut String, assistant: bool) {
        if let Cow::Owned(e) = self.escape(s, assistant) {
            *s = e;
        }
    }

    /// Escape every string and key in `v` (iteratively: client JSON may nest deep); whether
    /// anything changed.
    pub(crate) fn escape_value(&self, v: &mut Value, assistant: bool) -> bool {
        let mut changed = false;
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    if let Cow::Owned(e) = self.escape(s, assistant) {
                        *s = e;
                        changed = true;
                    }
                }
                Value::Array(a) => stack.extend(a.iter_mut()),
                Value::Object(o) => {
                    if o.keys()
                        .any(|k| matches!(self.escape(k, assistant), Cow::Owned(_)))
                    {
                        let old = std::mem::take(o);
                        *o = old
                            .into_iter()
                            .map(|(k, v)| (self.escape(&k, assistant).into_owned(), v))
                            .collect();
                        changed = true;
                    }
                    stack.extend(o.values_mut());
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        changed
    }

    /// `text` with its escapes undone.
    fn unescape<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !text.contains(ESC) {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find(ESC) {
            out.push_str(&rest[..i]);
            let after = &rest[i + ESC.len_utf8()..];
            let Some(j) = after.find(ESC) else {
                out.push_str(&rest[i..]);
                return Cow::Owned(out);
            };
            let inner = &after[..j];
            match inner
                .parse::<usize>()
                .ok()
                .and_then(|k| self.guarded.get(k))
            {
                Some(g) => out.push_str(g),
                None if inner.is_empty() => out.push(ESC),
                // Not an escape this module wrote: left as it is.
                None => out.push_str(&rest[i..i + ESC.len_utf8() + j + ESC.len_utf8()]),
            }
            rest = &after[j + ESC.len_utf8()..];
        }
        out.push_str(rest);
        Cow::Owned(out)
    }

    /// The tokens of a prompt rendered from escaped client text (no BOS added).
    pub(crate) fn tokenize(&self, model: &LlamaModel, prompt: &str) -> Vec<LlamaToken> {
        let vocab = model.vocab();
        let mut out = Vec::with_capacity(prompt.len() / 3 + 1);
        for frag in self.partition(prompt) {
            match frag {
                Frag::Token(t) => out.push(t),
                Frag::Text(a, b) => {
                    let text = self.unescape(&prompt[a..b]);
                    for piece in self.pieces(&text) {
                        vocab.tokenize_into(piece.as_bytes(), &mut out, false, false);
                    }
                }
            }
        }
        out
    }

    /// `text` cut inside every user-defined guarded string it holds (after its first
    /// character), so llama.cpp reads each as text.
    fn pieces<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut cuts: Vec<usize> = Vec::new();
        for (g, _) in self.guarded.iter().zip(&self.in_text).filter(|(_, u)| **u) {
            let step = g.chars().next().map_or(1, char::len_utf8);
            if step == g.len() {
                continue;
            }
            cuts.extend(text.match_indices(g.as_str()).map(|(i, _)| i + step));
        }
        if cuts.is_empty() {
            return vec![text];
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut out = Vec::with_capacity(cuts.len() + 1);
        let mut from = 0;
        for c in cuts {
            out.push(&text[from..c]);
            from = c;
        }
        out.push(&text[from..]);
        out
    }

    /// `prompt` split as llama.cpp splits a prompt at special tokens: each token in turn,
    /// longest first, found in every text left, the whitespace beside it dropped where its
    /// attributes say so.
    fn partition(&self, prompt: &str) -> Vec<Frag> {
        if prompt.is_empty() {
            return Vec::new();
        }
        let mut frags = vec![Frag::Text(0, prompt.len())];
        for s in &self.specials {
            if !prompt.contains(s.text.as_str()) {
                continue;
            }
            let mut next = Vec::with_capacity(frags.len() + 2);
            for f in frags {
                let Frag::Text(mut a, b) = f else {
                    next.push(f);
                    continue;
                };
                while let Some(m) = prompt[a..b].find(s.text.as_str()).map(|m| a + m) {
                    let mut left = m;
                    if s.lstrip {
                        left = a + prompt[a..m].trim_end_matches(is_c_space).len();
                    }
                    if left > a {
                        next.push(Frag::Text(a, left));
                    }
                    next.push(Frag::Token(s.id));
                    a = m + s.text.len();
                    if s.rstrip {
                        a = b - prompt[a..b].trim_start_matches(is_c_space).len();
                    }
                }
                if a < b {
                    next.push(Frag::Text(a, b));
                }
            }
            frags = next;
        }
        frags
    }
}

/// C's `isspace` in the "C" locale, which llama.cpp strips with.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
}

/// A piece of a prompt: text (byte range) or a special token.
enum Frag {
    Text(usize, usize),
    Token(LlamaToken),
}

#[cfg(test)]
mod tests;
