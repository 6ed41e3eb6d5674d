//! What a request asks of the stages besides its tools and messages — how much of a call the
//! grammar enforces ([`Mode`]), whether a reasoning block may or must open the reply
//! ([`Think`]), the plan ([`Plan`]), all of it carried together as the [`CallShape`] a call
//! grammar is compiled for — and what a reply took ([`Path`]). Shared by compile, parse,
//! decode, the providers and run; this module must not act on them.

use crate::define::tool::ToolChoice;

/// What a pool's call grammar is compiled for, defined once and carried whole from a
/// request's reader to whoever compiles it (the embedded engine, or a provider's GBNF).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallShape {
    /// Which calls may or must be made.
    pub choice: ToolChoice,
    /// Whether several calls may be made.
    pub parallel: bool,
    /// How much of the call the grammar enforces.
    pub mode: Mode,
    /// Whether a reasoning block may or must open the reply.
    pub think: Think,
    /// Most calls one reply may make (`None`: no bound but the token limit).
    pub max_calls: Option<usize>,
    /// Plan, then calls, and how call or text is chosen under it.
    pub plan: Plan,
    /// The JSON Schema a reply without calls must match (a response format beside the
    /// tools); `None` leaves the text branch free.
    pub answer: Option<serde_json::Value>,
}

impl CallShape {
    /// The same shape with a call required ([`ToolChoice::with_call_required`]): what a
    /// [`Plan::Calls`] reply that chose to call is counted under.
    pub fn calling(&self) -> Self {
        Self {
            choice: self.choice.with_call_required(),
            ..self.clone()
        }
    }

    /// The same shape without a plan: the reply under which [`Plan::Calls`] chooses call or
    /// text.
    pub fn unplanned(&self) -> Self {
        Self {
            plan: Plan::Off,
            ..self.clone()
        }
    }
}

/// Whether the reply may or must open with a reasoning block (`CallSyntax::reasoning`: the
/// family's own, `<think>` by default; `<think>` under a user grammar).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Think {
    /// No reasoning block: its markers are ordinary text.
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

/// Plan, then calls: where several calls may be made, whether the reply first says how many
/// (`Number of tool calls needed: N`) and then makes exactly that many.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Plan {
    /// No plan line: the model ends its reply when it will (the default model after one
    /// call: BFCL's `parallel` 0 of 200).
    #[default]
    Off,
    /// Call or text is chosen as without a plan (the unplanned reply is decoded first); a
    /// reply that calls is then decoded again under the plan with a count of 1 to 9, so
    /// declines stay the model's own unplanned choice and only a calling reply is counted.
    Calls,
    /// The count chooses call or text too: a count of 0 is a reply in text (the count's
    /// `call_bias` defaults to -2; a model asked "how many" rarely says 0).
    Count,
}

impl Plan {
    /// Read `on` (= [`Plan::Calls`]), `off` or `count`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "on" => Some(Self::Calls),
            "off" => Some(Self::Off),
            "count" => Some(Self::Count),
            _ => None,
        }
    }

    /// Whether a reply may open with a plan line.
    pub fn is_on(self) -> bool {
        self != Self::Off
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
    /// Read `grammar`, `json` or `prompt`.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Grammar, Self::Json, Self::Prompt]
            .into_iter()
            .find(|m| m.as_str() == name)
    }

    /// The name used on the command line and in replies.
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Grammar => "grammar",
            Mode::Json => "json",
            Mode::Prompt => "prompt",
        }
    }
}

/// What constrained a reply — the one name of the path taken, on every front end and provider
/// (`toolgram.path`). Providers fall back along grammar → strict JSON → prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    /// A grammar in the model's call syntax: the call and its arguments' schema cannot be
    /// malformed.
    Grammar,
    /// The embedded engine's JSON mode: the call shape and the tool name are enforced, the
    /// arguments are any JSON object, checked after parsing.
    Json,
    /// A provider's strict JSON-Schema mode (function tools or structured output): the
    /// provider enforces the schema in its own subset; the rest is checked after parsing.
    StrictJson,
    /// Nothing enforced: tools described in the prompt, the reply read leniently and
    /// validated.
    Prompt,
}

impl Path {
    /// The name in replies: `grammar`, `json`, `strict_json`, `prompt`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Grammar => "grammar",
            Self::Json => "json",
            Self::StrictJson => "strict_json",
            Self::Prompt => "prompt",
        }
    }
}

impl From<Mode> for Path {
    /// The path the embedded engine takes for a mode.
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Grammar => Self::Grammar,
            Mode::Json => Self::Json,
            Mode::Prompt => Self::Prompt,
        }
    }
}
