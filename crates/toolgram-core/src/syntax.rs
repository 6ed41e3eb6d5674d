//! The call-syntax registry: each model family's native tool-call syntax, declared ONCE.
//!
//! A [`CallSyntax`] is data: the markers around the calls and the key that carries the
//! arguments. The grammar fragment ([`crate::compile`]), the renderer ([`CallSyntax::render_calls`])
//! and the parser ([`crate::parse`]) are all derived from that one declaration, so they cannot
//! drift apart. Adding a family means adding one entry to [`REGISTRY`]; no other table of
//! syntaxes may exist.

use crate::pyjson;
use crate::tool::ToolCall;
use serde_json::{Map, Value};

/// A piece of a marker: text the vocabulary may hold as one special token, or plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// A marker the model's vocabulary usually has as a single special token.
    Token(&'static str),
    /// Literal text.
    Text(&'static str),
}

impl Piece {
    /// The text this piece spells.
    pub fn text(&self) -> &'static str {
        match self {
            Piece::Token(t) | Piece::Text(t) => t,
        }
    }
}

/// One model family's call syntax. Each call is the JSON object
/// `{"name": <tool>, <args_key>: <arguments>}` between `call_open` and `call_close`; calls are
/// separated by `separator`; the whole list sits between `section_open` and `section_close`.
#[derive(Debug, PartialEq, Eq)]
pub struct CallSyntax {
    /// Registry name.
    pub name: &'static str,
    /// Other names users may give.
    pub aliases: &'static [&'static str],
    /// Which models speak it.
    pub description: &'static str,
    /// Before the first call.
    pub section_open: &'static [Piece],
    /// After the last call.
    pub section_close: &'static [Piece],
    /// Before each call.
    pub call_open: &'static [Piece],
    /// After each call.
    pub call_close: &'static [Piece],
    /// Between two calls.
    pub separator: &'static [Piece],
    /// The key holding the arguments object.
    pub args_key: &'static str,
    /// Substrings of a chat template that identify this syntax.
    pub template_markers: &'static [&'static str],
    /// Whether the family also writes calls as bare JSON objects without the markers (Qwen
    /// does under `auto`); if so, a reply that starts with `{` is read as calls, and the
    /// `auto` grammar constrains it as one.
    pub bare_calls: bool,
}

/// The markdown fence a family writing bare calls may put around them (```` ```json ````).
pub const JSON_FENCE: (&str, &str) = ("```json\n", "\n```");

/// The reasoning block `--think` allows or demands before the answer (special tokens in
/// vocabularies that have them, e.g. Qwen3, DeepSeek-R1; plain text elsewhere).
pub const THINK: (Piece, Piece) = (Piece::Token("<think>"), Piece::Token("</think>"));

/// Every known syntax; [`detect`] tries them in this order and falls back to the last.
pub static REGISTRY: &[CallSyntax] = &[
    CallSyntax {
        name: "hermes",
        aliases: &["qwen", "qwen2.5", "qwen3"],
        description: "Hermes / Qwen 2.5+: <tool_call>\\n{\"name\": …, \"arguments\": {…}}\\n</tool_call>",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Token("<tool_call>"), Piece::Text("\n")],
        call_close: &[Piece::Text("\n"), Piece::Token("</tool_call>")],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: true,
        template_markers: &["<tool_call>"],
    },
    CallSyntax {
        name: "mistral",
        aliases: &["mistral-v3"],
        description: "Mistral v3+: [TOOL_CALLS][{\"name\": …, \"arguments\": {…}}, …]",
        section_open: &[Piece::Token("[TOOL_CALLS]"), Piece::Text("[")],
        section_close: &[Piece::Text("]")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text(", ")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["[TOOL_CALLS]"],
    },
    CallSyntax {
        name: "llama3-json",
        aliases: &["llama3", "llama3.1", "llama3.2"],
        description: "Llama 3.1+ JSON tool calling: {\"name\": …, \"parameters\": {…}}",
        section_open: &[],
        section_close: &[],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "parameters",
        bare_calls: false,
        template_markers: &["<|python_tag|>", "ipython"],
    },
    CallSyntax {
        name: "generic-json",
        aliases: &["json", "generic"],
        description: "Templates without tool syntax: {\"name\": …, \"arguments\": {…}}, one call per line; tools described in the system prompt",
        section_open: &[],
        section_close: &[],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &[],
    },
];

/// Find a syntax by name or alias.
pub fn by_name(name: &str) -> Option<&'static CallSyntax> {
    REGISTRY
        .iter()
        .find(|s| s.name == name || s.aliases.contains(&name))
}

/// Pick the syntax a chat template speaks; `generic-json` when it shows no tool syntax.
pub fn detect(template: &str) -> &'static CallSyntax {
    REGISTRY
        .iter()
        .find(|s| s.template_markers.iter().any(|m| template.contains(m)))
        .unwrap_or(&REGISTRY[REGISTRY.len() - 1])
}

/// Concatenate the text of marker pieces.
pub fn text_of(pieces: &[Piece]) -> String {
    pieces.iter().map(Piece::text).collect()
}

impl CallSyntax {
    /// The text that opens a response's calls (section opener, else the first call opener);
    /// empty when the calls are bare JSON.
    pub fn opener(&self) -> String {
        let section = text_of(self.section_open);
        if section.is_empty() {
            text_of(self.call_open)
        } else {
            section
        }
    }

    /// The first marker piece of the calls, if any.
    pub fn first_piece(&self) -> Option<Piece> {
        self.section_open
            .first()
            .or(self.call_open.first())
            .copied()
    }

    /// One call's JSON object, spelled the way the grammar spells it.
    pub fn call_json(&self, name: &str, arguments: &Value) -> String {
        let mut obj = Map::new();
        obj.insert("name".into(), Value::String(name.to_owned()));
        obj.insert(self.args_key.into(), arguments.clone());
        pyjson::to_string(&Value::Object(obj), None)
    }

    /// Render calls in this syntax: exactly the text the compiled grammar accepts for them.
    pub fn render_calls(&self, calls: &[ToolCall]) -> String {
        let mut out = text_of(self.section_open);
        for (i, c) in calls.iter().enumerate() {
            if i > 0 {
                out.push_str(&text_of(self.separator));
            }
            out.push_str(&text_of(self.call_open));
            out.push_str(&self.call_json(&c.name, &c.arguments));
            out.push_str(&text_of(self.call_close));
        }
        out.push_str(&text_of(self.section_close));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_families_from_templates() {
        assert_eq!(detect("{{ '<tool_call>' }}").name, "hermes");
        assert_eq!(detect("[TOOL_CALLS] x").name, "mistral");
        assert_eq!(detect("<|python_tag|>").name, "llama3-json");
        assert_eq!(detect("<|im_start|>{{ m.content }}").name, "generic-json");
    }

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(by_name("qwen").map(|s| s.name), Some("hermes"));
        assert!(by_name("nope").is_none());
    }
}
