//! What a request asks of the stages besides its tools and messages: how much of a call the
//! grammar enforces ([`Mode`]) and whether a reasoning block may or must open the reply
//! ([`Think`]). Shared by compile, parse, decode and run; this module must not act on them.

/// Whether the reply may or must open with a reasoning block (`syntax::THINK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Think {
    /// No reasoning block: `<think>` is ordinary text.
    #[default]
    Off,
    /// The reply may open with one reasoning block.
    Optional,
    /// The reply must open with one reasoning block.
    Required,
}

impl Think {
    /// Read `off`, `optional` or `required`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "off" => Some(Self::Off),
            "optional" => Some(Self::Optional),
            "required" => Some(Self::Required),
            _ => None,
        }
    }
}

/// How much of a call the grammar enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The call syntax, the tool name and the tool's argument schema.
    #[default]
    Grammar,
    /// What a plain JSON mode gives: the call syntax, one of the tool names, and any JSON
    /// object as arguments; the schema is checked only after parsing.
    Json,
    /// No constraint: tools and example calls are described in the prompt, the reply is
    /// read by the lenient parser and validated (with retries) afterwards.
    Prompt,
}

impl Mode {
    /// The name used on the command line and in replies.
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Grammar => "grammar",
            Mode::Json => "json",
            Mode::Prompt => "prompt",
        }
    }
}
