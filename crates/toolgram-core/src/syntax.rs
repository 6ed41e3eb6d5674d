//! The call-syntax registry: each model family's native tool-call syntax, declared ONCE.
//!
//! A [`CallSyntax`] is data: the markers around the calls and the key that carries the
//! arguments. The grammar fragment ([`crate::compile`]), the renderer ([`CallSyntax::render_calls`])
//! and the parser ([`crate::parse`]) are all derived from that one declaration, so they cannot
//! drift apart. Adding a family means adding one entry to [`REGISTRY`]; no other table of
//! syntaxes may exist.

use crate::define::tool::ToolCall;
use crate::pyjson;
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
    /// How one call's name and arguments are spelled between `call_open` and `call_close`.
    /// Only [`CallBody::Json`] compiles to a grammar today; the lenient parser reads all.
    pub body: CallBody,
    /// The reasoning block markers (open, close) this family writes, if any.
    pub think: Option<(&'static str, &'static str)>,
    /// Turn/channel markers that may wrap or end the reply's text; never part of content.
    pub noise: &'static [&'static str],
}

/// How a call's name and arguments are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallBody {
    /// A JSON object `{"name": …, <args_key>: {…}}` (a JSON array of them after a section
    /// opener is read too).
    Json,
    /// `<name_prefix>NAME<name_end>` then the arguments as one JSON object
    /// (Mistral `name[ARGS]{…}`, DeepSeek, Kimi K2, functionary, Gemma 4).
    NameThenArgs {
        /// Text right before the name (may be empty).
        name_prefix: &'static str,
        /// Text ending the name; empty: the name ends where the arguments' `{` starts.
        name_end: &'static str,
        /// Marker between the name and a call id (`[CALL_ID]`); empty: none.
        id_marker: &'static str,
        /// The text before `name_end` is the call's id (`functions.NAME:0`): the name is it
        /// without `name_prefix` and the `:N` suffix.
        name_is_id: bool,
    },
    /// XML-like arguments: `<name_open>NAME<name_close>[…tag_end]` then per argument
    /// `<key_open>KEY<key_close>[…tag_end]<value_open>VALUE<value_close>`, then `<call_end>`.
    Tagged {
        /// Before the name (`<function=`); empty: the name starts the call.
        name_open: &'static str,
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
    /// XML elements named after the arguments: `<name_open>NAME<name_close>…tag_end`, then
    /// `<KEY>VALUE</KEY>` per argument (nested elements are objects, `<item>` lists are
    /// arrays), then `call_end` (MiniMax M3).
    XmlElements {
        /// Before the name.
        name_open: &'static str,
        /// After the name.
        name_close: &'static str,
        /// The rest of the opening tag ends with this.
        tag_end: &'static str,
        /// After the last argument.
        call_end: &'static str,
    },
    /// OpenAI harmony (GPT-OSS): messages `<|channel|>CHANNEL[ to=functions.NAME]
    /// [<|constrain|>json]<|message|>BODY<|call|>`; reasoning in the `analysis` channel.
    Harmony,
    /// Python call syntax `[name(a=1, b="x"), …]` (LFM2, Llama 3.2 pythonic).
    Pythonic,
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
        body: CallBody::Json,
        think: Some(("<think>", "</think>")),
        noise: &[],
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
        body: CallBody::Json,
        think: Some(("[THINK]", "[/THINK]")),
        noise: &[],
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
        body: CallBody::Json,
        think: None,
        noise: &["<|eom_id|>", "<|eot_id|>"],
    },
    CallSyntax {
        name: "qwen3-coder",
        aliases: &["qwen3.5", "nemotron3"],
        description: "Qwen3-Coder / Qwen3.5 / Nemotron 3: <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Token("<tool_call>")],
        call_close: &[Piece::Token("</tool_call>")],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<function=", "<parameter="],
        body: CallBody::Tagged {
            name_open: "<function=",
            name_close: ">",
            key_open: "<parameter=",
            key_close: ">",
            tag_end: "",
            value_open: "",
            value_close: "</parameter>",
            call_end: "</function>",
        },
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "seed-oss",
        aliases: &[],
        description: "ByteDance Seed-OSS: <seed:tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></seed:tool_call>",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Token("<seed:tool_call>")],
        call_close: &[Piece::Token("</seed:tool_call>")],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<seed:tool_call>"],
        body: CallBody::Tagged {
            name_open: "<function=",
            name_close: ">",
            key_open: "<parameter=",
            key_close: ">",
            tag_end: "",
            value_open: "",
            value_close: "</parameter>",
            call_end: "</function>",
        },
        think: Some(("<seed:think>", "</seed:think>")),
        noise: &[],
    },
    CallSyntax {
        name: "glm",
        aliases: &["glm4.5", "ling"],
        description: "GLM 4.5+ / Ling / Spark: <tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value></tool_call>",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Token("<tool_call>")],
        call_close: &[Piece::Token("</tool_call>")],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<arg_key>"],
        body: CallBody::Tagged {
            name_open: "",
            name_close: "",
            key_open: "<arg_key>",
            key_close: "</arg_key>",
            tag_end: "",
            value_open: "<arg_value>",
            value_close: "</arg_value>",
            call_end: "",
        },
        think: Some(("<think>", "</think>")),
        noise: &["<|role_end|>"],
    },
    CallSyntax {
        name: "minimax-m2",
        aliases: &[],
        description: "MiniMax M2: <minimax:tool_call><invoke name=\"NAME\"><parameter name=\"KEY\">VALUE</parameter></invoke></minimax:tool_call>",
        section_open: &[Piece::Token("<minimax:tool_call>")],
        section_close: &[Piece::Token("</minimax:tool_call>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<minimax:tool_call>"],
        body: CallBody::Tagged {
            name_open: "<invoke name=\"",
            name_close: "\"",
            key_open: "<parameter name=\"",
            key_close: "\"",
            tag_end: ">",
            value_open: "",
            value_close: "</parameter>",
            call_end: "</invoke>",
        },
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "deepseek-v3.2",
        aliases: &[],
        description: "DeepSeek V3.2 DSML: <｜DSML｜function_calls><｜DSML｜invoke name=\"NAME\"><｜DSML｜parameter name=\"KEY\" string=\"…\">VALUE</｜DSML｜parameter>…",
        section_open: &[Piece::Token("<｜DSML｜function_calls>")],
        section_close: &[Piece::Token("</｜DSML｜function_calls>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<｜DSML｜function_calls>"],
        body: CallBody::Tagged {
            name_open: "<｜DSML｜invoke name=\"",
            name_close: "\"",
            key_open: "<｜DSML｜parameter name=\"",
            key_close: "\"",
            tag_end: ">",
            value_open: "",
            value_close: "</｜DSML｜parameter>",
            call_end: "</｜DSML｜invoke>",
        },
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "deepseek-v4",
        aliases: &[],
        description: "DeepSeek V4 DSML: <｜DSML｜tool_calls><｜DSML｜invoke name=\"NAME\">…</｜DSML｜tool_calls>",
        section_open: &[Piece::Token("<｜DSML｜tool_calls>")],
        section_close: &[Piece::Token("</｜DSML｜tool_calls>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<｜DSML｜tool_calls>"],
        body: CallBody::Tagged {
            name_open: "<｜DSML｜invoke name=\"",
            name_close: "\"",
            key_open: "<｜DSML｜parameter name=\"",
            key_close: "\"",
            tag_end: ">",
            value_open: "",
            value_close: "</｜DSML｜parameter>",
            call_end: "</｜DSML｜invoke>",
        },
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "kimi-k3",
        aliases: &[],
        description: "Kimi K3: <|open|>tools<|sep|><|open|>call tool=\"NAME\" …<|sep|><|open|>argument key=\"KEY\" …<|sep|>VALUE<|close|>argument<|sep|>…",
        section_open: &[Piece::Token("<|open|>tools<|sep|>")],
        section_close: &[Piece::Token("<|close|>tools<|sep|>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<|open|>call tool="],
        body: CallBody::Tagged {
            name_open: "<|open|>call tool=\"",
            name_close: "\"",
            key_open: "<|open|>argument key=\"",
            key_close: "\"",
            tag_end: "<|sep|>",
            value_open: "",
            value_close: "<|close|>argument<|sep|>",
            call_end: "<|close|>call<|sep|>",
        },
        think: Some(("<|open|>think<|sep|>", "<|close|>think<|sep|>")),
        noise: &[
            "<|open|>response<|sep|>",
            "<|close|>response<|sep|>",
            "<|close|>message<|sep|>",
        ],
    },
    CallSyntax {
        name: "lfm2",
        aliases: &[],
        description: "LFM2 pythonic: <|tool_call_start|>[name(a=1), …]<|tool_call_end|>",
        section_open: &[Piece::Token("<|tool_call_start|>"), Piece::Text("[")],
        section_close: &[Piece::Text("]"), Piece::Token("<|tool_call_end|>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text(", ")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<|tool_call_start|>"],
        body: CallBody::Pythonic,
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "mistral-v11",
        aliases: &[],
        description: "Mistral v11+ (Magistral, Devstral, Ministral 3): [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Token("[TOOL_CALLS]")],
        call_close: &[],
        separator: &[],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["[ARGS]"],
        body: CallBody::NameThenArgs {
            name_prefix: "",
            name_end: "[ARGS]",
            id_marker: "[CALL_ID]",
            name_is_id: false,
        },
        think: Some(("[THINK]", "[/THINK]")),
        noise: &[],
    },
    CallSyntax {
        name: "deepseek-r1",
        aliases: &[],
        description: "DeepSeek R1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}```<｜tool▁call▁end｜>",
        section_open: &[Piece::Token("<｜tool▁calls▁begin｜>")],
        section_close: &[Piece::Token("<｜tool▁calls▁end｜>")],
        call_open: &[Piece::Token("<｜tool▁call▁begin｜>")],
        call_close: &[Piece::Token("<｜tool▁call▁end｜>")],
        separator: &[],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["function<｜tool▁sep｜>"],
        body: CallBody::NameThenArgs {
            name_prefix: "function<｜tool▁sep｜>",
            name_end: "\n",
            id_marker: "",
            name_is_id: false,
        },
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "deepseek-v3.1",
        aliases: &[],
        description: "DeepSeek V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        section_open: &[Piece::Token("<｜tool▁calls▁begin｜>")],
        section_close: &[Piece::Token("<｜tool▁calls▁end｜>")],
        call_open: &[Piece::Token("<｜tool▁call▁begin｜>")],
        call_close: &[Piece::Token("<｜tool▁call▁end｜>")],
        separator: &[],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<｜tool▁sep｜>"],
        body: CallBody::NameThenArgs {
            name_prefix: "",
            name_end: "<｜tool▁sep｜>",
            id_marker: "",
            name_is_id: false,
        },
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "kimi-k2",
        aliases: &[],
        description: "Kimi K2: <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>",
        section_open: &[Piece::Token("<|tool_calls_section_begin|>")],
        section_close: &[Piece::Token("<|tool_calls_section_end|>")],
        call_open: &[Piece::Token("<|tool_call_begin|>")],
        call_close: &[Piece::Token("<|tool_call_end|>")],
        separator: &[],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<|tool_calls_section_begin|>"],
        body: CallBody::NameThenArgs {
            name_prefix: "functions.",
            name_end: "<|tool_call_argument_begin|>",
            id_marker: "",
            name_is_id: true,
        },
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "functionary-v3.1",
        aliases: &[],
        description: "Functionary v3.1 (Llama 3.1): <function=NAME>{…}</function>",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Text("<function=")],
        call_close: &[Piece::Text("</function>")],
        separator: &[],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<function="],
        body: CallBody::NameThenArgs {
            name_prefix: "",
            name_end: ">",
            id_marker: "",
            name_is_id: false,
        },
        think: None,
        noise: &[],
    },
    CallSyntax {
        name: "gemma4",
        aliases: &[],
        description: "Gemma 4: <|tool_call>call:NAME{key:<|\"|>text<|\"|>}<tool_call|>",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Token("<|tool_call>")],
        call_close: &[Piece::Token("<tool_call|>")],
        separator: &[],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<|tool_call>"],
        body: CallBody::NameThenArgs {
            name_prefix: "call:",
            name_end: "",
            id_marker: "",
            name_is_id: false,
        },
        think: Some(("<|channel>thought", "<channel|>")),
        noise: &[],
    },
    CallSyntax {
        name: "command-r7b",
        aliases: &[],
        description: "Command R7B / Cohere 2: <|START_ACTION|>[{\"tool_call_id\": …, \"tool_name\": …, \"parameters\": {…}}]<|END_ACTION|>",
        section_open: &[Piece::Token("<|START_ACTION|>")],
        section_close: &[Piece::Token("<|END_ACTION|>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text(",")],
        args_key: "parameters",
        bare_calls: false,
        template_markers: &["<|START_ACTION|>"],
        body: CallBody::JsonKeyed {
            name_key: "tool_name",
            id_key: "tool_call_id",
        },
        think: Some(("<|START_THINKING|>", "<|END_THINKING|>")),
        noise: &[
            "<|START_RESPONSE|>",
            "<|END_RESPONSE|>",
            "<|START_TEXT|>",
            "<|END_TEXT|>",
        ],
    },
    CallSyntax {
        name: "command-r-plus",
        aliases: &[],
        description: "Command R+: Action:\n```json\n[{\"tool_name\": …, \"parameters\": {…}}]\n```",
        section_open: &[Piece::Text("Action:")],
        section_close: &[],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text(",")],
        args_key: "parameters",
        bare_calls: false,
        template_markers: &["Action:"],
        body: CallBody::JsonKeyed {
            name_key: "tool_name",
            id_key: "",
        },
        think: None,
        noise: &[],
    },
    CallSyntax {
        name: "nemotron-v2",
        aliases: &[],
        description: "Nemotron Nano v2: <TOOLCALL>[{\"name\": …, \"arguments\": {…}}]</TOOLCALL>",
        section_open: &[Piece::Token("<TOOLCALL>"), Piece::Text("[")],
        section_close: &[Piece::Text("]"), Piece::Token("</TOOLCALL>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text(", ")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<TOOLCALL>"],
        body: CallBody::Json,
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "apriel",
        aliases: &[],
        description: "Apriel 1.5: <tool_calls>[{\"name\": …, \"arguments\": {…}}]</tool_calls>",
        section_open: &[Piece::Token("<tool_calls>"), Piece::Text("[")],
        section_close: &[Piece::Text("]"), Piece::Token("</tool_calls>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text(", ")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<tool_calls>"],
        body: CallBody::Json,
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "firefunction-v2",
        aliases: &[],
        description: "FireFunction v2: functools[{\"name\": …, \"arguments\": {…}}]",
        section_open: &[Piece::Text("functools[")],
        section_close: &[Piece::Text("]")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text(", ")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["functools["],
        body: CallBody::Json,
        think: None,
        noise: &[],
    },
    CallSyntax {
        name: "apertus",
        aliases: &[],
        description: "Apertus: <|tools_prefix|>[{\"NAME\": {…}}]<|tools_suffix|>",
        section_open: &[Piece::Token("<|tools_prefix|>"), Piece::Text("[")],
        section_close: &[Piece::Text("]"), Piece::Token("<|tools_suffix|>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text(", ")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<|tools_prefix|>"],
        body: CallBody::JsonNamedKey,
        think: None,
        noise: &[],
    },
    CallSyntax {
        name: "minicpm5",
        aliases: &[],
        description: "MiniCPM 5: <function name=\"NAME\"><param name=\"KEY\">VALUE</param></function>",
        section_open: &[],
        section_close: &[],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<param name="],
        body: CallBody::Tagged {
            name_open: "<function name=\"",
            name_close: "\"",
            key_open: "<param name=\"",
            key_close: "\"",
            tag_end: ">",
            value_open: "",
            value_close: "</param>",
            call_end: "</function>",
        },
        think: Some(("<think>", "</think>")),
        noise: &[],
    },
    CallSyntax {
        name: "gigachat3.1",
        aliases: &[],
        description: "GigaChat 3.1: <|function_call|>{\"name\": …, \"arguments\": {…}}",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Token("<|function_call|>")],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<|function_call|>"],
        body: CallBody::Json,
        think: None,
        noise: &[],
    },
    CallSyntax {
        name: "gigachat3",
        aliases: &[],
        description: "GigaChat 3: <|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": …, \"arguments\": {…}}",
        section_open: &[],
        section_close: &[],
        call_open: &[
            Piece::Token("<|message_sep|>"),
            Piece::Text("\n\nfunction call"),
            Piece::Token("<|role_sep|>"),
            Piece::Text("\n"),
        ],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["function call<|role_sep|>"],
        body: CallBody::Json,
        think: None,
        noise: &[],
    },
    CallSyntax {
        name: "minimax-m3",
        aliases: &[],
        description: "MiniMax M3: <tool_call><invoke name=\"NAME\"><KEY>VALUE</KEY>…</invoke></tool_call>, tokens glued by ]<]minimax[>[",
        section_open: &[Piece::Token("<tool_call>")],
        section_close: &[Piece::Token("</tool_call>")],
        call_open: &[],
        call_close: &[],
        separator: &[Piece::Text("\n")],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["]<]minimax[>[", "<mm:think>"],
        body: CallBody::XmlElements {
            name_open: "<invoke name=\"",
            name_close: "\"",
            tag_end: ">",
            call_end: "</invoke>",
        },
        think: Some(("<mm:think>", "</mm:think>")),
        noise: &["]<]minimax[>["],
    },
    CallSyntax {
        name: "gpt-oss",
        aliases: &["harmony"],
        description: "GPT-OSS harmony: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>",
        section_open: &[],
        section_close: &[],
        call_open: &[Piece::Token("<|start|>"), Piece::Text("assistant")],
        call_close: &[Piece::Token("<|call|>")],
        separator: &[],
        args_key: "arguments",
        bare_calls: false,
        template_markers: &["<|channel|>", "<|constrain|>"],
        body: CallBody::Harmony,
        think: None,
        noise: &[],
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
        body: CallBody::Json,
        think: None,
        noise: &[],
    },
];

/// Find a syntax by name or alias.
pub fn by_name(name: &str) -> Option<&'static CallSyntax> {
    REGISTRY
        .iter()
        .find(|s| s.name == name || s.aliases.contains(&name))
}

/// Pick the grammar-compilable syntax a chat template speaks; `generic-json` when it shows
/// none. Families the compiler cannot spell yet are left out, so a grammar is never built
/// for a syntax it would get wrong.
pub fn detect(template: &str) -> &'static CallSyntax {
    REGISTRY
        .iter()
        .filter(|s| s.is_compilable())
        .find(|s| s.template_markers.iter().any(|m| template.contains(m)))
        .unwrap_or(&REGISTRY[REGISTRY.len() - 1])
}

/// Pick the family a chat template speaks among ALL registered syntaxes (for reading free
/// output): the entry with the most of its markers in the template, the earlier on a tie;
/// `generic-json` when none shows.
pub fn detect_family(template: &str) -> &'static CallSyntax {
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
    /// Whether [`crate::compile`] can spell this syntax as a grammar.
    pub fn is_compilable(&self) -> bool {
        self.body == CallBody::Json
    }

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

    /// Render calls in this syntax: for compilable syntaxes exactly the text the compiled
    /// grammar accepts for them; for the others the family's native spelling.
    pub fn render_calls(&self, calls: &[ToolCall]) -> String {
        let mut out = text_of(self.section_open);
        for (i, c) in calls.iter().enumerate() {
            if i > 0 {
                out.push_str(&text_of(self.separator));
            }
            out.push_str(&text_of(self.call_open));
            out.push_str(&self.render_body(i, c));
            out.push_str(&text_of(self.call_close));
        }
        out.push_str(&text_of(self.section_close));
        out
    }

    fn render_body(&self, index: usize, c: &ToolCall) -> String {
        let json = |v: &Value| pyjson::to_string(v, None);
        match self.body {
            CallBody::Json => self.call_json(&c.name, &c.arguments),
            CallBody::JsonKeyed { name_key, id_key } => {
                let mut obj = Map::new();
                if !id_key.is_empty() {
                    obj.insert(id_key.into(), Value::String(c.id.clone()));
                }
                obj.insert(name_key.into(), Value::String(c.name.clone()));
                obj.insert(self.args_key.into(), c.arguments.clone());
                json(&Value::Object(obj))
            }
            CallBody::JsonNamedKey => {
                let mut obj = Map::new();
                obj.insert(c.name.clone(), c.arguments.clone());
                json(&Value::Object(obj))
            }
            CallBody::NameThenArgs {
                name_prefix,
                name_end,
                id_marker,
                name_is_id,
            } => {
                let suffix = if name_is_id {
                    format!(":{index}")
                } else {
                    String::new()
                };
                let id = if id_marker.is_empty() {
                    String::new()
                } else {
                    format!("{id_marker}{}", c.id)
                };
                let args = json(&c.arguments);
                format!("{name_prefix}{}{suffix}{id}{name_end}{args}", c.name)
            }
            CallBody::Tagged {
                name_open,
                name_close,
                key_open,
                key_close,
                tag_end,
                value_open,
                value_close,
                call_end,
            } => {
                let mut out = format!("{name_open}{}{name_close}{tag_end}", c.name);
                if name_close.is_empty() {
                    out.push('\n');
                }
                for (k, v) in c.arguments.as_object().into_iter().flatten() {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        other => json(other),
                    };
                    out.push_str(&format!(
                        "{key_open}{k}{key_close}{tag_end}{value_open}{text}{value_close}"
                    ));
                }
                out.push_str(call_end);
                out
            }
            CallBody::XmlElements {
                name_open,
                name_close,
                tag_end,
                call_end,
            } => {
                let mut out = format!("{name_open}{}{name_close}{tag_end}", c.name);
                for (k, v) in c.arguments.as_object().into_iter().flatten() {
                    out.push_str(&xml_element(k, v));
                }
                out.push_str(call_end);
                out
            }
            CallBody::Harmony => format!(
                "<|channel|>commentary to=functions.{} <|constrain|>json<|message|>{}",
                c.name,
                json(&c.arguments)
            ),
            CallBody::Pythonic => {
                let args: Vec<String> = c
                    .arguments
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}={}", python_literal(v)))
                    .collect();
                format!("{}({})", c.name, args.join(", "))
            }
        }
    }
}

/// A JSON value as XML elements: objects nest, arrays repeat `<item>`.
fn xml_element(key: &str, v: &Value) -> String {
    let inner = match v {
        Value::String(s) => s.clone(),
        Value::Object(m) => m.iter().map(|(k, v)| xml_element(k, v)).collect(),
        Value::Array(items) => items.iter().map(|v| xml_element("item", v)).collect(),
        other => other.to_string(),
    };
    format!("<{key}>{inner}</{key}>")
}

/// A JSON value spelled as a Python literal (`True`, `None`, dicts and lists).
fn python_literal(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(python_literal).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_literal(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        other => other.to_string(),
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
    fn detects_new_families_only_for_reading() {
        let coder = "<tool_call>\n<function={{ name }}>\n<parameter={{ k }}>";
        assert_eq!(detect(coder).name, "hermes");
        assert_eq!(detect_family(coder).name, "qwen3-coder");
        assert_eq!(detect_family("<|tool_call_start|>").name, "lfm2");
        assert_eq!(detect("<|tool_call_start|>").name, "generic-json");
    }

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(by_name("qwen").map(|s| s.name), Some("hermes"));
        assert!(by_name("nope").is_none());
    }
}
