//! `toolgram bench call | compile | mask | tools | server-call`: the benchmarks of
//! `toolgram-eval`'s `bench` module, each subcommand's flags turned into its options and its
//! report printed (JSON on stdout; `compile` prints a table and its JSON summary on stderr).
//! Grammar vs JSON vs prompt on BFCL is `toolgram eval bfcl`.
//!
//! Argument parsing and printing only: running, timing, reading datasets and scoring live in
//! `toolgram-eval`.

mod compile;

use crate::call::{CallArgs, messages};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use toolgram_core::{ToolChoice, ToolSet};
use toolgram_engine::models;
use toolgram_eval::bench::{call, mask, server_call, tools};

#[derive(Subcommand)]
pub(crate) enum BenchCommand {
    /// Time one request constrained and unconstrained, `--runs` times each.
    Call {
        #[command(flatten)]
        call: Box<CallArgs>,
        /// Repetitions of each mode.
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// JSON-Schema coverage and correctness on MaskBench (no model).
    Compile(compile::CompileBenchArgs),
    /// Mask time per token: llguidance vs llama.cpp's GBNF sampler on the same pool and call.
    Mask(MaskArgs),
    /// Grammar tools: tokens of the grammar form vs the JSON forms over the same inputs.
    Tools(ToolsBenchArgs),
    /// One tool call end to end: the embedded engine vs llama-server's own tool calling on
    /// the same GGUF and threads.
    ServerCall(ServerCallArgs),
}

/// Arguments of `toolgram bench mask`.
#[derive(Args)]
pub(crate) struct MaskArgs {
    /// JSON file with OpenAI-style function tools.
    #[arg(long)]
    pub tools: PathBuf,
    /// Model (default: the default model).
    #[arg(long)]
    pub model: Option<String>,
    /// Replays of each call.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
}

/// Arguments of `toolgram bench tools`.
#[derive(Args)]
pub(crate) struct ToolsBenchArgs {
    /// JSON file: `{"sql_schema": "CREATE TABLE …", "tools": {"name": ["input", …]}}`.
    #[arg(long, default_value = "examples/grammar-tools/inputs.json")]
    pub inputs: PathBuf,
    /// Model whose tokenizer counts (default: the default model).
    #[arg(long)]
    pub model: Option<String>,
}

/// Arguments of `toolgram bench server-call`.
#[derive(Args)]
pub(crate) struct ServerCallArgs {
    #[command(flatten)]
    call: Box<CallArgs>,
    /// The `llama-server` binary (`scripts/build-llama-server` prints its path).
    #[arg(long)]
    server: PathBuf,
    /// Timed calls per side.
    #[arg(long, default_value_t = 5)]
    runs: usize,
}

pub(crate) fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Call { call, runs } => run_call(&call, runs),
        BenchCommand::Compile(args) => compile::run(args),
        BenchCommand::Mask(args) => run_mask(&args),
        BenchCommand::Tools(args) => run_tools(&args),
        BenchCommand::ServerCall(args) => run_server_call(&args),
    }
}

fn run_call(args: &CallArgs, runs: usize) -> anyhow::Result<()> {
    let tools = ToolSet::from_json_str(&std::fs::read_to_string(&args.tools)?)?;
    let msgs = messages(args)?;
    let model = models::resolve(args.model.as_deref())?;
    let report = call::run(&call::CallBenchOptions {
        model: &model,
        threads: args.threads,
        ctx_size: args.ctx_size,
        messages: &msgs,
        tools: &tools,
        choice: ToolChoice::from_cli(&args.tool_choice),
        parallel: args.parallel_tool_calls,
        max_tokens: args.max_tokens,
        runs,
    })?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

fn run_mask(args: &MaskArgs) -> anyhow::Result<()> {
    let tools = ToolSet::from_json_str(&std::fs::read_to_string(&args.tools)?)?;
    let model = models::resolve(args.model.as_deref())?;
    let report = mask::run(&mask::MaskBenchOptions {
        model: &model,
        tools: &tools,
        runs: args.runs,
    })?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

fn run_tools(args: &ToolsBenchArgs) -> anyhow::Result<()> {
    let model = models::resolve(args.model.as_deref())?;
    let rows = tools::run(&tools::ToolsBenchOptions {
        inputs: &args.inputs,
        model: &model,
    })?;
    for row in rows {
        println!("{}", serde_json::to_string(&row)?);
    }
    Ok(())
}

fn run_server_call(args: &ServerCallArgs) -> anyhow::Result<()> {
    let call = &args.call;
    let tools_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&call.tools)?)?;
    let tools = ToolSet::from_value(&tools_json)?;
    let msgs = messages(call)?;
    let model = models::resolve(call.model.as_deref())?;
    let report = server_call::run(&server_call::ServerCallOptions {
        model: &model,
        server: &args.server,
        threads: call.threads,
        ctx_size: call.ctx_size,
        messages: &msgs,
        tools_json: &tools_json,
        tools: &tools,
        tool_choice: &call.tool_choice,
        parallel: call.parallel_tool_calls,
        max_tokens: call.max_tokens,
        runs: args.runs,
    })?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
