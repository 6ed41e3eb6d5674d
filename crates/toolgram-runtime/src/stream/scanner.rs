//! Constrained output as it is decoded → deltas: reasoning, content, and per call its name
//! (once the name is complete) and its arguments in serde_json's compact form. It reads the
//! same [`CallSyntax`] declaration the grammar and the parser come from, and holds back any
//! text that may still turn out to be call markup, so markup never shows as content. This
//! module must not decide validity: the final parse and validation do.

use super::canonical::Canonical;
use toolgram_core::syntax::{CallSyntax, JSON_FENCE};

/// One piece of what the model is writing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Delta {
    Reasoning(String),
    Content(String),
    CallName { index: usize, name: String },
    Arguments { index: usize, text: String },
    CallEnd { index: usize },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Waiting to see whether the reply opens with the syntax's reasoning marker.
    Start,
    /// Inside the reasoning block, which began at this offset.
    Reasoning(usize),
    /// The answer, from this offset; not yet known to be text or calls.
    Answer(usize),
    /// Text, from this offset.
    Text(usize),
    /// Calls (markup and JSON objects), from this offset.
    Calls,
}

/// What the scanner needs to know about the request.
#[derive(Debug, Clone)]
pub(crate) struct ScanOptions {
    pub syntax: &'static CallSyntax,
    pub think: bool,
    /// Calls may be made (`tool_choice` is not `none`).
    pub calls: bool,
    /// Free text under a user grammar: content exactly as generated, no call detection.
    pub plain: bool,
}

/// The scanner over one generation.
#[derive(Debug)]
pub(crate) struct Scanner {
    opts: ScanOptions,
    opener: String,
    /// The syntax's reasoning block markers (open, close).
    think: (String, String),
    pending: Vec<u8>,
    text: String,
    phase: Phase,
    /// Offset up to which reasoning or content has been written out.
    sent: usize,
    calls: CallReader,
}

impl Scanner {
    pub(crate) fn new(opts: ScanOptions) -> Self {
        Self {
            opener: opts.syntax.opener(),
            think: {
                let r = opts.syntax.reasoning();
                (r.open_text(), r.close_text())
            },
            calls: CallReader::new(opts.syntax.args_key),
            opts,
            pending: Vec::new(),
            text: String::new(),
            phase: Phase::Start,
            sent: 0,
        }
    }

    /// Take the bytes of one decode step; append the deltas they complete.
    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut Vec<Delta>) {
        self.pending.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let chunk = String::from_utf8_lossy(&self.pending[..valid]).into_owned();
        self.pending.drain(..valid);
        self.text.push_str(&chunk);
        self.advance(out);
    }

    fn advance(&mut self, out: &mut Vec<Delta>) {
        loop {
            let before = self.phase;
            match self.phase {
                Phase::Start => self.start(),
                Phase::Reasoning(from) => self.reasoning(from, out),
                Phase::Answer(from) => self.answer(from),
                Phase::Text(from) => self.text_until_calls(from, out),
                Phase::Calls => {
                    self.calls.read(&self.text, out);
                    return;
                }
            }
            if self.phase == before {
                return;
            }
        }
    }

    fn start(&mut self) {
        let open = self.think.0.as_str();
        if !self.opts.think {
            self.phase = Phase::Answer(0);
            return;
        }
        let rest = self.text.trim_start();
        if rest.starts_with(open) {
            let from = self.text.len() - rest.len() + open.len();
            self.phase = Phase::Reasoning(from);
            self.sent = from;
        } else if !open.starts_with(rest) {
            self.phase = Phase::Answer(0);
        }
    }

    fn reasoning(&mut self, from: usize, out: &mut Vec<Delta>) {
        let close = self.think.1.as_str();
        let body = &self.text[from..];
        let (found, held) = (body.find(close), held_back(body, close));
        let (body_len, close_len) = (body.len(), close.len());
        if let Some(end) = found {
            self.emit_trimmed(from + end, from, out, Delta::Reasoning);
            self.phase = Phase::Answer(from + end + close_len);
            self.sent = from + end + close_len;
            return;
        }
        let safe = from + body_len - held;
        self.emit_trimmed(safe, from, out, Delta::Reasoning);
    }

    /// Write `text[sent..end]` as deltas of a block trimmed on both sides: leading
    /// whitespace of the block (from `block_start`) skipped, trailing whitespace held.
    fn emit_trimmed(
        &mut self,
        end: usize,
        block_start: usize,
        out: &mut Vec<Delta>,
        make: fn(String) -> Delta,
    ) {
        let lead = block_start
            + (self.text[block_start..].len() - self.text[block_start..].trim_start().len());
        let start = self.sent.max(lead);
        let end = start.max(block_start + self.text[block_start..end].trim_end().len());
        if end > start {
            out.push(make(self.text[start..end].to_owned()));
            self.sent = end;
        }
    }

    fn answer(&mut self, from: usize) {
        if self.opts.plain || !self.opts.calls {
            self.phase = Phase::Text(from);
            self.sent = self.sent.max(from);
            return;
        }
        let body = &self.text[from..];
        let rest = body.trim_start();
        let lead = from + body.len() - rest.len();
        let syntax = self.opts.syntax;
        let bare = self.opener.is_empty() || syntax.bare_calls;
        if rest.is_empty() || (syntax.bare_calls && JSON_FENCE.0.starts_with(rest)) {
            return;
        }
        if bare && (rest.starts_with('{') || (syntax.bare_calls && rest.starts_with(JSON_FENCE.0)))
        {
            self.calls.pos = lead;
            self.phase = Phase::Calls;
        } else {
            self.phase = Phase::Text(from);
            self.sent = self.sent.max(from);
        }
    }

    fn text_until_calls(&mut self, from: usize, out: &mut Vec<Delta>) {
        if self.opts.plain {
            // After a reasoning block the answer starts past its line break.
            let start = if from > 0 && self.sent == from {
                let body = &self.text[from..];
                let rest = body.trim_start_matches([' ', '\n']);
                if rest.is_empty() {
                    return;
                }
                from + body.len() - rest.len()
            } else {
                self.sent
            };
            if self.text.len() > start {
                out.push(Delta::Content(self.text[start..].to_owned()));
            }
            self.sent = self.text.len();
            return;
        }
        let body = &self.text[from..];
        let found = (self.opts.calls && !self.opener.is_empty())
            .then(|| body.find(&self.opener))
            .flatten();
        match found {
            Some(at) => {
                self.emit_trimmed(from + at, from, out, Delta::Content);
                self.calls.pos = from + at;
                self.phase = Phase::Calls;
            }
            None => {
                let held = if self.opts.calls {
                    held_back(body, &self.opener)
                } else {
                    0
                };
                self.emit_trimmed(self.text.len() - held, from, out, Delta::Content);
            }
        }
    }
}

/// How many trailing bytes of `text` could be the start of `marker`.
fn held_back(text: &str, marker: &str) -> usize {
    (1..marker.len().min(text.len() + 1))
        .rev()
        .find(|&n| marker.is_char_boundary(n) && text.ends_with(&marker[..n]))
        .unwrap_or(0)
}

/// Reads call objects `{"name": …, <args_key>: {…}}` out of the call region, ignoring the
/// markup between them.
#[derive(Debug)]
struct CallReader {
    args_key: &'static str,
    pos: usize,
    depth: usize,
    in_string: bool,
    escape: bool,
    string_start: usize,
    expect_key: bool,
    reading_key: bool,
    key: String,
    reading_name: bool,
    args: Option<Canonical>,
    index: Option<usize>,
    count: usize,
    named: bool,
    early_args: String,
}

impl CallReader {
    fn new(args_key: &'static str) -> Self {
        Self {
            args_key,
            pos: 0,
            depth: 0,
            in_string: false,
            escape: false,
            string_start: 0,
            expect_key: false,
            reading_key: false,
            key: String::new(),
            reading_name: false,
            args: None,
            index: None,
            count: 0,
            named: false,
            early_args: String::new(),
        }
    }

    fn read(&mut self, text: &str, out: &mut Vec<Delta>) {
        let mut args_out = String::new();
        for (off, c) in text[self.pos..].char_indices() {
            let at = self.pos + off;
            self.step(text, at, c, &mut args_out, out);
        }
        self.flush_args(&mut args_out, out);
        self.pos = text.len();
    }

    fn flush_args(&mut self, args_out: &mut String, out: &mut Vec<Delta>) {
        if args_out.is_empty() {
            return;
        }
        match (self.index, self.named) {
            (Some(index), true) => out.push(Delta::Arguments {
                index,
                text: std::mem::take(args_out),
            }),
            _ => self.early_args.push_str(&std::mem::take(args_out)),
        }
    }

    fn step(
        &mut self,
        text: &str,
        at: usize,
        c: char,
        args_out: &mut String,
        out: &mut Vec<Delta>,
    ) {
        // Feed the arguments' value, which ends at a `,` or `}` of the call object.
        if let Some(canon) = self.args.as_mut() {
            let ends = !self.in_string && self.depth == 1 && matches!(c, ',' | '}');
            if ends {
                canon.finish(args_out);
                self.args = None;
            } else {
                canon.push(c, args_out);
            }
        }
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if c == '\\' {
                self.escape = true;
            } else if c == '"' {
                self.in_string = false;
                self.string_ended(&text[self.string_start..=at], out);
            }
            return;
        }
        match c {
            '"' => {
                self.in_string = true;
                self.string_start = at;
                self.reading_key = self.depth == 1 && self.expect_key;
                self.reading_name = self.depth == 1 && !self.expect_key && self.key == "name";
            }
            '{' if self.depth == 0 => {
                self.depth = 1;
                self.index = Some(self.count);
                self.count += 1;
                self.named = false;
                self.expect_key = true;
                self.key.clear();
                self.early_args.clear();
            }
            // Markup between calls (a section's `[`) is not JSON of a call.
            '[' if self.depth == 0 => {}
            '{' | '[' => self.depth += 1,
            '}' | ']' if self.depth > 0 => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.flush_args(args_out, out);
                    if let Some(index) = self.index.take() {
                        out.push(Delta::CallEnd { index });
                    }
                }
            }
            ':' if self.depth == 1 => {
                self.expect_key = false;
                if self.key == self.args_key {
                    self.args = Some(Canonical::default());
                }
            }
            ',' if self.depth == 1 => {
                self.expect_key = true;
                self.key.clear();
            }
            _ => {}
        }
    }

    fn string_ended(&mut self, raw: &str, out: &mut Vec<Delta>) {
        let value = serde_json::from_str::<String>(raw).unwrap_or_default();
        if self.reading_key {
            self.key = value;
            self.reading_key = false;
        } else if self.reading_name {
            self.reading_name = false;
            if let Some(index) = self.index {
                self.named = true;
                out.push(Delta::CallName { index, name: value });
                if !self.early_args.is_empty() {
                    out.push(Delta::Arguments {
                        index,
                        text: std::mem::take(&mut self.early_args),
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgram_core::syntax::by_name;

    fn scan(syntax: &str, think: bool, text: &str, step: usize) -> Vec<Delta> {
        let Some(syntax) = by_name(syntax) else {
            panic!("no syntax {syntax}");
        };
        let mut s = Scanner::new(ScanOptions {
            syntax,
            think,
            calls: true,
            plain: false,
        });
        let mut out = Vec::new();
        let bytes = text.as_bytes();
        for chunk in bytes.chunks(step) {
            s.push(chunk, &mut out);
        }
        out
    }

    fn joined(deltas: &[Delta], pick: fn(&Delta) -> Option<&str>) -> String {
        deltas.iter().filter_map(pick).collect()
    }

    #[test]
    fn hermes_text_then_a_call_streams_without_markup_in_content() {
        let text = "<think>\nplan it\n</think>\nSure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par\\u00e9\", \"n\": 1.50}}\n</tool_call>";
        for step in [1, 2, 3, 7, 64] {
            let d = scan("hermes", true, text, step);
            let content = joined(&d, |d| match d {
                Delta::Content(t) => Some(t),
                _ => None,
            });
            assert_eq!(content, "Sure.", "step {step}: {d:?}");
            let reasoning = joined(&d, |d| match d {
                Delta::Reasoning(t) => Some(t),
                _ => None,
            });
            assert_eq!(reasoning, "plan it");
            let args = joined(&d, |d| match d {
                Delta::Arguments { text, .. } => Some(text),
                _ => None,
            });
            assert_eq!(args, r#"{"city":"Paré","n":1.5}"#);
            assert!(d.contains(&Delta::CallName {
                index: 0,
                name: "get_weather".into()
            }));
            assert_eq!(d.last(), Some(&Delta::CallEnd { index: 0 }));
        }
    }

    #[test]
    fn a_family_streams_reasoning_inside_its_own_markers() {
        let text = "[THINK]plan it[/THINK]Sure.";
        for step in [1, 3, 64] {
            let d = scan("mistral", true, text, step);
            let reasoning = joined(&d, |d| match d {
                Delta::Reasoning(t) => Some(t),
                _ => None,
            });
            let content = joined(&d, |d| match d {
                Delta::Content(t) => Some(t),
                _ => None,
            });
            assert_eq!(reasoning, "plan it", "step {step}: {d:?}");
            assert_eq!(content, "Sure.", "step {step}: {d:?}");
        }
    }

    #[test]
    fn two_bare_calls_get_their_own_indices() {
        let text = "{\"name\": \"a\", \"arguments\": {\"x\": [1, {\"y\": \"}\"}]}}\n{\"name\": \"b\", \"arguments\": {}}";
        let d = scan("hermes", false, text, 1);
        let args = |i| {
            d.iter()
                .filter_map(|d| match d {
                    Delta::Arguments { index, text } if *index == i => Some(text.as_str()),
                    _ => None,
                })
                .collect::<String>()
        };
        assert_eq!(args(0), r#"{"x":[1,{"y":"}"}]}"#);
        assert_eq!(args(1), "{}");
        assert!(!d.iter().any(|d| matches!(d, Delta::Content(_))), "{d:?}");
    }

    #[test]
    fn a_partial_opener_is_held_back_until_it_is_text() {
        let d = scan("hermes", false, "a <tool is here", 1);
        let content = joined(&d, |d| match d {
            Delta::Content(t) => Some(t),
            _ => None,
        });
        assert_eq!(content, "a <tool is here");
        let d = scan("hermes", false, "a <tool_c", 1);
        let content = joined(&d, |d| match d {
            Delta::Content(t) => Some(t),
            _ => None,
        });
        assert_eq!(content, "a");
    }
}
