//! Argument types several commands share (`call`, `render`, `generate`, `grammar`): the call
//! mode and the think block, as clap reads them and as core names them. Parsing only.

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
