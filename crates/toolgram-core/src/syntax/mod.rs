//! The call-syntax registry: each model family's native tool-call syntax, declared ONCE.
//!
//! A [`CallSyntax`] is data: the markers around the calls and the key that carries the
//! arguments. The grammar fragment ([`crate::compile`]), the renderer ([`CallSyntax::render_calls`])
//! and the parser ([`crate::parse`]) are all derived from that one declaration, so they cannot
//! drift apart. Adding a family means adding one entry to [`REGISTRY`] (`registry.rs`); no
//! other table of syntaxes may exist. [`render`](CallSyntax::render_calls) writes calls,
//! [`prompt`] describes tools in a system prompt, [`pyjson`] spells JSON as `json.dumps`.

pub mod prompt;
pub mod pyjson;
mod registry;
mod render;

pub use registry::REGISTRY;

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

/// One model family's call syntax. Each call is a body spelled as [`CallBody`] says (the JSON
/// object `{"name": <tool>, <args_key>: <arguments>}` for most) between `call_open` and
/// `call_close`; calls are separated by `separator`; the whole list sits between
/// `section_open` and `section_close`. `think` is the reasoning block the lenient parser
/// reads; a grammar's reasoning block is [`CallSyntax::reasoning`].
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
    /// The reply may end after its last call without `section_close`: set by detection
    /// for a template that leaves the section open (DeepSeek R1 Distill Llama closes it
    /// only after a second call), never by a registry entry.
    pub section_close_optional: bool,
    /// Before each call.
    pub call_open: &'static [Piece],
    /// After each call.
    pub call_close: &'static [Piece],
    /// Between two calls.
    pub separator: &'static [Piece],
    /// The key holding the arguments object.
    pub args_key: &'static str,
    /// The key a JSON call may carry its id under, after the arguments (Mistral v3:
    /// `"id"`); empty: none.
    pub id_key: &'static str,
    /// Substrings of a chat template that identify this syntax.
    pub template_markers: &'static [&'static str],
    /// Whether the family also writes calls as bare JSON objects without the markers (Qwen
    /// does under `auto`); if so, a reply that starts with `{` is read as calls, and the
    /// `auto` grammar constrains it as one.
    pub bare_calls: bool,
    /// `Some(header)` when the generation prompt ends with the first call's `call_open`
    /// (functionary v3.2's `>>>`): a reply starts inside it, with a call's body, or with
    /// `header` (the text recipient, `all\n`) and text, calls following in full.
    pub prompt_opens: Option<&'static str>,
    /// How one call's name and arguments are spelled between `call_open` and `call_close`.
    pub body: CallBody,
    /// The reasoning block this family writes, if any (`--think` asks for this one).
    pub think: Option<Reasoning>,
    /// Turn/channel markers that may wrap or end the reply's text; never part of content.
    /// Removed from the whole reply before it is read.
    pub noise: &'static [&'static str],
    /// Markers a template writes around an answer's text alone (`<answer>`…`</answer>`):
    /// removed from content only, never from call arguments. Registry entries have none;
    /// detection sets them from what a template renders.
    pub text_markers: &'static [&'static str],
}

/// How a call's name and arguments are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallBody {
    /// A JSON object `{"name": …, <args_key>: {…}}` (a JSON array of them after a section
    /// opener is read too).
    Json,
    /// `<name_prefix>[ID<id_first>]NAME<name_end>` then the arguments as one JSON object
    /// (Mistral `name[ARGS]{…}`, DeepSeek, Kimi K2, functionary, Gemma 4, Solar Open).
    NameThenArgs {
        /// Text right before the name (may be empty).
        name_prefix: &'static str,
        /// Marker after a call id written before the name (Solar Open's
        /// `ID<|tool_call:name|>NAME`); empty: no id there.
        id_first: &'static str,
        /// Text ending the name; empty: the name ends where the arguments' `{` starts.
        name_end: &'static str,
        /// Marker between the name and a call id (`[CALL_ID]`); empty: none.
        id_marker: &'static str,
        /// The text before `name_end` is the call's id (`functions.NAME:0`): the name is it
        /// without `name_prefix` and the `:N` suffix.
        name_is_id: bool,
        /// Empty: the arguments are strict JSON. Else Gemma's own spelling, strings
        /// between this marker: bare keys in sorted order, `{key:<|"|>text<|"|>}` (Gemma 4,
        /// [`GEMMA_QUOTE`]; FunctionGemma's `<escape>`).
        quote: &'static str,
    },
    /// XML-like arguments: `<name_open>NAME<name_close>[…tag_end]` then per argument
    /// `<key_open>KEY<key_close>[…tag_end]<value_open>VALUE<value_close>`, then `<call_end>`.
    Tagged {
        /// Before the name (`<function=`); empty: the name starts the call.
        name_open: &'static str,
        /// Where a header names the tool before the call's own name tag (Muse Glimmer's
        /// ` to=NAME<|message|>…<atem:invoke name="NAME"`): the text between the two names;
        /// empty: the name is written once.
        name_again: &'static str,
        /// After the name (`>`); empty: the name ends at the line end or the first key.
        name_close: &'static str,
        /// Before a key (`<parameter=`).
        key_open: &'static str,
        /// After a key (`>` or the attribute's closing quote).
        key_close: &'static str,
        /// When non-empty, the rest of an opening tag (other attributes) up to and including
        /// this text is skipped after a name or a key.
        tag_end: &'static str,
        /// Before a value (`<arg_value>`); may be empty.
        value_open: &'static str,
        /// After a value (`</parameter>`).
        value_close: &'static str,
        /// Attributes a template adds to an opening tag before `tag_end` (DSML's `string`,
        /// Kimi K3's `index` and `type`), each `NAME="WORD"`.
        attributes: &'static [&'static str],
        /// After the last argument (`</function>`); may be empty.
        call_end: &'static str,
    },
    /// A JSON object with other key names: `{<id_key>: …, <name_key>: …, <args_key>: {…}}`
    /// (Command R: `tool_call_id`, `tool_name`, `parameters`).
    JsonKeyed {
        /// The key holding the tool's name.
        name_key: &'static str,
        /// The key holding the call id; empty: none.
        id_key: &'static str,
    },
    /// A JSON object whose only key is the tool's name: `{"NAME": {…}}` (Apertus).
    JsonNamedKey,
    /// A call as OpenAI's API writes it, `{"id": ID, "type": "function", "function":
    /// {"name": NAME, "arguments": {…}}}` (templates that write `tool_calls | tojson`).
    OpenAiJson,
    /// XML elements named after the arguments: `<name_open>NAME<name_close>…tag_end`, then
    /// `<KEY>VALUE</KEY>` per argument (nested elements are objects, `<item>` lists are
    /// arrays), then `call_end`; `glue` before every tag (MiniMax M3).
    XmlElements {
        /// Before the name.
        name_open: &'static str,
        /// After the name.
        name_close: &'static str,
        /// The rest of the opening tag ends with this.
        tag_end: &'static str,
        /// After the last argument.
        call_end: &'static str,
        /// Written before every tag of a call and before the section's closer (MiniMax's
        /// `]<]minimax[>[`); may be empty. Also listed in the entry's `noise`.
        glue: &'static str,
    },
    /// OpenAI harmony (GPT-OSS): messages `<|channel|>CHANNEL[ to=functions.NAME]
    /// [<|constrain|>json]<|message|>BODY<|call|>`; reasoning in the `analysis` channel.
    Harmony,
    /// Python call syntax `[name(a=1, b="x"), …]` (LFM2, Llama 3.2 pythonic).
    Pythonic,
}

impl CallBody {
    /// A tagged call's name tag for tool `name`: `<name_open>NAME[<name_again>NAME]<name_close>`
    /// (empty for other bodies).
    pub fn name_tag(&self, name: &str) -> String {
        match self {
            CallBody::Tagged {
                name_open,
                name_again: "",
                name_close,
                ..
            } => format!("{name_open}{name}{name_close}"),
            CallBody::Tagged {
                name_open,
                name_again,
                name_close,
                ..
            } => format!("{name_open}{name}{name_again}{name}{name_close}"),
            _ => String::new(),
        }
    }
}

/// The markdown fence a family writing bare calls may put around them (```` ```json ````).
pub const JSON_FENCE: (&str, &str) = ("```json\n", "\n```");

/// The default reasoning block (special tokens in vocabularies that have them, e.g. Qwen3,
/// DeepSeek-R1; plain text elsewhere): `--think` asks for it where a family has none of its
/// own ([`CallSyntax::think`]), and under a user grammar.
pub const THINK: (Piece, Piece) = (Piece::Token("<think>"), Piece::Token("</think>"));

/// Gemma 4's string quote: `<|"|>text<|"|>`.
pub const GEMMA_QUOTE: &str = "<|\"|>";

/// Harmony's message-header markers: channel, message, content-type constraint.
pub const HARMONY_HEADER: [Piece; 3] = [
    Piece::Token("<|channel|>"),
    Piece::Token("<|message|>"),
    Piece::Token("<|constrain|>"),
];

/// The markers around a reasoning block a grammar allows before the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reasoning {
    /// Before the reasoning text.
    pub open: &'static [Piece],
    /// After it: the first piece ends the text, the rest follow it.
    pub close: &'static [Piece],
}

impl Reasoning {
    /// `<think>` … `</think>` ([`THINK`]).
    pub const THINK: Reasoning = Reasoning {
        open: &[THINK.0],
        close: &[THINK.1],
    };

    /// Harmony's analysis message: `<|channel|>analysis<|message|>` … `<|end|>`, then the
    /// next message's `<|start|>assistant`.
    pub const HARMONY: Reasoning = Reasoning {
        open: &[
            HARMONY_HEADER[0],
            Piece::Text("analysis"),
            HARMONY_HEADER[1],
        ],
        close: &[
            Piece::Token("<|end|>"),
            Piece::Token("<|start|>"),
            Piece::Text("assistant"),
        ],
    };

    /// The opening text.
    pub fn open_text(&self) -> String {
        text_of(self.open)
    }

    /// The closing text.
    pub fn close_text(&self) -> String {
        text_of(self.close)
    }
}

/// Find a syntax by name or alias.
pub fn by_name(name: &str) -> Option<&'static CallSyntax> {
    REGISTRY
        .iter()
        .find(|s| s.name == name || s.aliases.contains(&name))
}

/// Pick the syntax a chat template speaks: the entry with the most of its markers in the
/// template, the earlier on a tie; `generic-json` when it shows none.
pub fn detect(template: &str) -> &'static CallSyntax {
    let score = |s: &CallSyntax| {
        s.template_markers
            .iter()
            .filter(|m| template.contains(*m))
            .count()
    };
    let mut best = &REGISTRY[REGISTRY.len() - 1];
    let mut best_score = 0;
    for s in REGISTRY {
        let n = score(s);
        if n > best_score {
            (best, best_score) = (s, n);
        }
    }
    best
}

/// Concatenate the text of marker pieces.
pub fn text_of(pieces: &[Piece]) -> String {
    pieces.iter().map(Piece::text).collect()
}

impl CallSyntax {
    /// What this syntax writes before every tag of a call and before the section's closer
    /// (MiniMax M3's `]<]minimax[>[`); empty for most.
    pub fn glue(&self) -> &'static str {
        match self.body {
            CallBody::XmlElements { glue, .. } => glue,
            _ => "",
        }
    }

    /// Every marker piece a grammar for this syntax may spell: the calls' markers, the
    /// reasoning block's, and harmony's message headers.
    pub fn marker_pieces(&self) -> Vec<Piece> {
        let reasoning = self.reasoning();
        let header: &[Piece] = match self.body {
            CallBody::Harmony => &HARMONY_HEADER,
            _ => &[],
        };
        [
            self.section_open,
            self.section_close,
            self.call_open,
            self.call_close,
            self.separator,
            reasoning.open,
            reasoning.close,
            header,
        ]
        .concat()
    }

    /// The reasoning block a grammar for this syntax allows before the answer: harmony's
    /// analysis message, else the family's own block, else `<think>`.
    pub fn reasoning(&self) -> Reasoning {
        match self.body {
            CallBody::Harmony => Reasoning::HARMONY,
            _ => self.think.unwrap_or(Reasoning::THINK),
        }
    }

    /// The text that opens a response's calls: the section opener, else the first call
    /// opener, else a tagged body's name opener (`<function name="`); empty when the calls
    /// are bare JSON.
    pub fn opener(&self) -> String {
        let section = text_of(self.section_open);
        let call = text_of(self.call_open);
        match self.body {
            _ if !section.is_empty() => section,
            _ if !call.is_empty() => call,
            CallBody::Tagged { name_open, .. } => name_open.to_owned(),
            _ => String::new(),
        }
    }

    /// The text that closes a response's calls: the section closer, else the call closer,
    /// else a tagged body's end marker; empty when the calls end with their JSON arguments,
    /// and for harmony, whose `<|call|>` ends the generation (an engine stopping there
    /// need not write it).
    pub fn closer(&self) -> String {
        let section = text_of(self.section_close);
        let call = text_of(self.call_close);
        match self.body {
            CallBody::Harmony => String::new(),
            _ if !section.is_empty() => section,
            _ if !call.is_empty() => call,
            CallBody::Tagged { call_end, .. } => call_end.to_owned(),
            _ => String::new(),
        }
    }

    /// The first marker piece of the calls, if any.
    pub fn first_piece(&self) -> Option<Piece> {
        self.section_open
            .first()
            .or(self.call_open.first())
            .copied()
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
    fn detects_families_of_every_body() {
        let coder = "<tool_call>\n<function={{ name }}>\n<parameter={{ k }}>";
        assert_eq!(detect(coder).name, "qwen3-coder");
        assert_eq!(detect("<|tool_call_start|>").name, "lfm2");
        let harmony = "<|channel|>{{ c }}<|constrain|>json";
        assert_eq!(detect(harmony).name, "gpt-oss");
        let m3 = "{{ ']<]minimax[>[' + '<invoke name=\"' }}<mm:think>";
        assert_eq!(detect(m3).name, "minimax-m3");
        // A template that only describes GLM's format in prose (vLLM's GLM 4 example).
        let glm = "<tool_call>function_name\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>";
        assert_eq!(detect(glm).name, "glm");
    }

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(by_name("qwen").map(|s| s.name), Some("hermes"));
        assert!(by_name("nope").is_none());
    }
}
