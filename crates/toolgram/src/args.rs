//! Argument types several commands share (`call`, `render`, `generate`, `grammar`, `serve`):
//! the call mode, the think block and the repeat policy, as clap reads them and as core and the
//! runtime name them. Parsing only.

use clap::ValueEnum;
use toolgram_core::define::request::{Mode, Think};

#[derive(Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// Full grammar: syntax, tool name and argument schema.
    Grammar,
    /// Syntax and tool name; any JSON object as arguments, validated after parsing.
    Json,
    /// No constraint: tools and example calls in the prompt, the reply parsed leniently and
    /// validated, retried on failure.
    Prompt,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ThinkArg {
    /// No reasoning block.
    Off,
    /// The reply may open with a reasoning block (the family's own, else <think>…</think>).
    Optional,
    /// The reply must open with a reasoning block (the family's own, else <think>…</think>).
    Required,
}

impl From<ThinkArg> for Think {
    fn from(t: ThinkArg) -> Self {
        match t {
            ThinkArg::Off => Think::Off,
            ThinkArg::Optional => Think::Optional,
            ThinkArg::Required => Think::Required,
        }
    }
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Grammar => Mode::Grammar,
            ModeArg::Json => Mode::Json,
            ModeArg::Prompt => Mode::Prompt,
        }
    }
}

/// `--repeats allow|list|forbid` (`call` and `serve`).
pub(crate) fn repeats(s: &str) -> Result<toolgram_runtime::Repeats, String> {
    toolgram_runtime::Repeats::from_name(s).ok_or_else(|| format!("`{s}`: allow, list or forbid"))
}
