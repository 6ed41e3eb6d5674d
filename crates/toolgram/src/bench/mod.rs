//! `toolgram bench call | compile | mask | tools | server-call | concurrent | e2e`: the benchmarks of
//! `toolgram-eval`'s `bench` module, each subcommand's flags turned into its options and its
//! report printed (JSON on stdout; `compile` prints a table and its JSON summary on stderr).
//! Grammar vs JSON vs prompt on BFCL is `toolgram eval bfcl`.
//!
//! Argument parsing and printing only: running, timing, reading datasets and scoring live in
//! `toolgram-eval`.

mod compile;

use crate::call::{CallArgs, messages};
use crate::output::say;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use toolgram_bench::inputs::{read_prompts, read_tools};
use toolgram_bench::peers::Peers;
use toolgram_bench::{call, concurrent, e2e, e2e_chart, e2e_table, mask, server_call, tools};
use toolgram_core::ToolChoice;
use toolgram_engine::models;

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
    /// Throughput with concurrent clients: `toolgram serve --parallel N` (continuous
    /// batching) vs llama-server `-np N`, the same GGUF, threads, context and requests.
    Concurrent(ConcurrentArgs),
    /// A tool call end to end, in one run: toolgram constrained and unconstrained, llama-server
    /// warm, a one-shot CLI call cold and warm, 1 vs 4 clients; each request against its limit.
    E2e(E2eArgs),
}

/// The servers a benchmark runs side by side and the settings every side shares.
#[derive(Args)]
pub(crate) struct PeerArgs {
    /// The `llama-server` binary (`scripts/build-llama-server` prints its path).
    #[arg(long)]
    server: PathBuf,
    /// Model (default: the default model).
    #[arg(long)]
    model: Option<String>,
    /// CPU threads, every side (default: the engine's default).
    #[arg(long)]
    threads: Option<u32>,
    /// Where the layers go, every side (llama-server gets the same as `-ngl`, `-dev`, `-sm`).
    #[command(flatten)]
    gpu: crate::args::GpuArgs,
    /// Context per sequence, every side.
    #[arg(long, default_value_t = 4096)]
    ctx_size: u32,
}

impl PeerArgs {
    /// Run `bench` with the peers these flags name (the model fetched if it is not here).
    fn run<T>(&self, bench: impl FnOnce(Peers) -> anyhow::Result<T>) -> anyhow::Result<T> {
        without_workers(&self.gpu)?;
        let model = models::resolve(self.model.as_deref())?;
        let toolgram = std::env::current_exe()?;
        let gpu = self.gpu.options();
        bench(Peers {
            toolgram: &toolgram,
            llama_server: &self.server,
            model: &model,
            threads: self
                .threads
                .unwrap_or_else(toolgram_engine::default_threads),
            gpu: &gpu,
            ctx: self.ctx_size,
        })
    }
}

/// Arguments of `toolgram bench e2e`.
#[derive(Args)]
pub(crate) struct E2eArgs {
    #[command(flatten)]
    peers: PeerArgs,
    /// Tool files, each run under `auto` and `required` (default: one tool and six tools).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "examples/weather.json,crates/toolgram-engine/tests/data/tools.json"
    )]
    tools: Vec<PathBuf>,
    /// Prompts for the concurrent clients (an array of strings or of objects with `prompt`).
    #[arg(long, default_value = "crates/toolgram-engine/tests/data/prompts.json")]
    prompts: PathBuf,
    /// The user's message of each single request.
    #[arg(long, default_value = "What's the weather like in Paris right now?")]
    prompt: String,
    /// Most tokens per reply.
    #[arg(long, default_value_t = 128)]
    max_tokens: usize,
    /// Fewer concurrent requests.
    #[arg(long)]
    quick: bool,
    /// Also draw where each request's time goes (an SVG) to this file.
    #[arg(long)]
    chart: Option<PathBuf>,
    /// Print only the report's JSON (default: the table on stderr, then the JSON).
    #[arg(long)]
    json: bool,
}

/// Arguments of `toolgram bench concurrent`.
#[derive(Args)]
pub(crate) struct ConcurrentArgs {
    /// JSON file with OpenAI-style function tools.
    #[arg(long)]
    tools: PathBuf,
    /// JSON file: an array of user prompts (strings, or objects with a `prompt` field).
    #[arg(long)]
    prompts: PathBuf,
    /// Client counts, comma-separated; the servers get the largest as lanes.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    clients: Vec<usize>,
    /// Timed requests, shared out among the clients (the same work for every client count).
    #[arg(long, default_value_t = 16)]
    requests: usize,
    /// `auto` or `required`.
    #[arg(long, default_value = "required")]
    tool_choice: String,
    /// Most tokens per reply.
    #[arg(long, default_value_t = 128)]
    max_tokens: usize,
    #[command(flatten)]
    peers: PeerArgs,
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
        BenchCommand::Concurrent(args) => run_concurrent(&args),
        BenchCommand::E2e(args) => run_e2e(&args),
    }
}

fn run_call(args: &CallArgs, runs: usize) -> anyhow::Result<()> {
    let (_, tools) = read_tools(crate::call::tools_path(args)?)?;
    let msgs = messages(args)?;
    let model = models::resolve(args.model.as_deref())?;
    let report = call::run(&call::CallBenchOptions {
        model: &model,
        threads: args.engine.threads,
        gpu: &args.engine.gpu.options(),
        ctx_size: args.engine.ctx_size,
        messages: &msgs,
        tools: &tools,
        choice: ToolChoice::from_cli(&args.tool_choice),
        parallel: args.parallel_tool_calls,
        max_tokens: args.max_tokens,
        runs,
    })?;
    say!("{}", serde_json::to_string_pretty(&report)?)?;
    Ok(())
}

fn run_mask(args: &MaskArgs) -> anyhow::Result<()> {
    let (_, tools) = read_tools(&args.tools)?;
    let model = models::resolve(args.model.as_deref())?;
    let report = mask::run(&mask::MaskBenchOptions {
        model: &model,
        tools: &tools,
        runs: args.runs,
    })?;
    say!("{}", serde_json::to_string(&report)?)?;
    Ok(())
}

fn run_tools(args: &ToolsBenchArgs) -> anyhow::Result<()> {
    let model = models::resolve(args.model.as_deref())?;
    let rows = tools::run(&tools::ToolsBenchOptions {
        inputs: &args.inputs,
        model: &model,
    })?;
    for row in rows {
        say!("{}", serde_json::to_string(&row)?)?;
    }
    Ok(())
}

/// A benchmark beside llama-server cannot share workers with it: a worker serves one client
/// at a time, and the peer runs beside toolgram. `bench call` takes --rpc; `scripts/bench-rpc`
/// puts llama-server --rpc on the same workers, one side after the other.
fn without_workers(gpu: &crate::args::GpuArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        gpu.rpc.is_empty(),
        "--rpc: this benchmark runs llama-server beside toolgram, and a worker serves one \
         client at a time; use `toolgram bench call --rpc …`, or `scripts/bench-rpc \
         --llama-server …` for llama-server --rpc on the same workers"
    );
    Ok(())
}

fn run_server_call(args: &ServerCallArgs) -> anyhow::Result<()> {
    let call = &args.call;
    without_workers(&call.engine.gpu)?;
    let (tools_json, tools) = read_tools(crate::call::tools_path(call)?)?;
    let msgs = messages(call)?;
    let model = models::resolve(call.model.as_deref())?;
    let report = server_call::run(&server_call::ServerCallOptions {
        model: &model,
        server: &args.server,
        threads: call.engine.threads,
        gpu: &call.engine.gpu.options(),
        ctx_size: call.engine.ctx_size,
        messages: &msgs,
        tools_json: &tools_json,
        tools: &tools,
        tool_choice: &call.tool_choice,
        parallel: call.parallel_tool_calls,
        max_tokens: call.max_tokens,
        runs: args.runs,
    })?;
    say!("{}", serde_json::to_string_pretty(&report)?)?;
    Ok(())
}

fn run_e2e(args: &E2eArgs) -> anyhow::Result<()> {
    let pools = args
        .tools
        .iter()
        .map(|file| e2e::Pool::read(file))
        .collect::<Result<Vec<_>, _>>()?;
    let prompts = read_prompts(&args.prompts)?;
    let report = args.peers.run(|peers| {
        Ok(e2e::run(
            &e2e::E2eOptions {
                peers,
                pools: &pools,
                prompt: &args.prompt,
                concurrent_prompts: &prompts,
                max_tokens: args.max_tokens,
                quick: args.quick,
            },
            &mut |step| eprintln!("bench e2e: {step}"),
        )?)
    })?;
    if !args.json {
        eprint!("{}", e2e_table::table(&report.requests));
    }
    say!("{}", serde_json::to_string_pretty(&report)?)?;
    // After the report: a chart that cannot be written must not lose the run.
    if let Some(path) = &args.chart {
        let title = format!(
            "where the time of a tool call goes ({}, {} threads)",
            report.model.as_deref().unwrap_or("model"),
            report.threads
        );
        match e2e_chart::draw(&report.requests, &title, path) {
            Ok(()) => eprintln!("bench e2e: wrote {}", path.display()),
            Err(e) => eprintln!("bench e2e: no chart: {e}"),
        }
    }
    Ok(())
}

fn run_concurrent(args: &ConcurrentArgs) -> anyhow::Result<()> {
    let (tools_json, tools) = read_tools(&args.tools)?;
    let prompts = read_prompts(&args.prompts)?;
    let report = args.peers.run(|peers| {
        Ok(concurrent::run(
            &concurrent::ConcurrentOptions {
                peers,
                clients: &args.clients,
                requests: args.requests,
                tools_json: &tools_json,
                tools: &tools,
                prompts: &prompts,
                tool_choice: &args.tool_choice,
                max_tokens: args.max_tokens,
            },
            &mut |step| eprintln!("bench concurrent: {step}"),
        )?)
    })?;
    say!("{}", serde_json::to_string_pretty(&report)?)?;
    Ok(())
}
