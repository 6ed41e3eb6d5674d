//! `toolgram` — the command line over toolgram's library crates (`main.rs` calls [`main`];
//! [`Cli`] is public so that tests can parse what the docs show).
//!
//! Thin wiring only: argument parsing, files in, one JSON object out on stdout, one
//! `{"error":{…}}` line on stderr on failure. No pipeline logic lives here.
//!
//! # Contents
//!
//! | module | command |
//! |---|---|
//! | `call`, `generate`, `grammar`, `parse`, `syntax` | one call, free generation, the grammar a pool compiles to, reading free text, a template's call syntax |
//! | `serve` | the OpenAI and Anthropic APIs (the server crate's wiring) |
//! | `provider` | `render`, and `--provider` for `call` |
//! | `bench`, `eval` | the benchmarks and the evaluations of `toolgram-eval` |
//! | `model`, `devices`, `cache`, `tools` | the model registry, GPU devices, the prompt-prefix cache, grammar tools |
//! | `args`, `output` | arguments several commands share (the engine's settings, the levers, mode, think, repeats, GPU); printing replies and errors |

mod args;
mod bench;
mod cache;
mod call;
mod devices;
mod eval;
mod generate;
mod grammar;
mod model;
mod output;
mod parse;
mod provider;
mod serve;
mod syntax;
mod tools;
mod worker;

use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::process::ExitCode;

/// The command line.
#[derive(Parser)]
#[command(
    name = "toolgram",
    version,
    about = "LLM tool calls that are correct by construction"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one constrained tool call on the embedded model and print the assistant message.
    Call(call::CallArgs),
    /// Generate free text under any grammar (.lark, .gbnf) or JSON Schema.
    Generate(generate::GenerateArgs),
    /// Print (or --check) the grammar a tool pool compiles to.
    Grammar(grammar::GrammarArgs),
    /// Print the exact request body a provider would get (path and reason on stderr).
    Render(provider::RenderArgs),
    /// Serve the OpenAI API (chat completions, responses) on the embedded model or a provider.
    Serve(serve::ServeArgs),
    /// Read raw model text on stdin leniently and print the assistant message.
    Parse(parse::ParseArgs),
    /// Print the call syntax a chat template speaks (detected or derived from its calls).
    Syntax(syntax::SyntaxArgs),
    /// List or clear the prompt-prefix cache on disk.
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// List the GPU backends built in and the devices llama.cpp finds (`--device` names).
    Devices(devices::DevicesArgs),
    /// List, fetch or locate registry models.
    #[command(subcommand)]
    Model(model::ModelCommand),
    /// Measure end to end.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Evaluate on public benchmarks: grammar vs JSON vs prompt, beside a peer server.
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    /// Grammar tools: list them, print their grammars, run one.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Lend this machine's devices to another host's model (its `--rpc`), over ggml RPC.
    Worker(worker::WorkerArgs),
}

/// Run the command line this process was given.
pub fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLGRAM_LOG").unwrap_or_else(|_| {
                // Our own warnings (a damaged cache file ignored, a schema refused by
                // llguidance) are notes a user should see; llama.cpp's are not.
                tracing_subscriber::EnvFilter::new(
                    "error,toolgram_engine=warn,toolgram_runtime=warn",
                )
            }),
        )
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Call(args) => call::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Grammar(args) => grammar::run(args),
        Command::Render(args) => provider::render_cmd(args),
        Command::Serve(args) => serve::run(args),
        Command::Parse(args) => parse::run(args),
        Command::Syntax(args) => syntax::run(args),
        Command::Devices(args) => devices::run(&args),
        Command::Model(cmd) => model::run(cmd),
        Command::Cache(cmd) => cache::run(cmd),
        Command::Bench(cmd) => bench::run(cmd),
        Command::Eval(cmd) => eval::run(cmd),
        Command::Tools(cmd) => tools::run(cmd),
        Command::Worker(args) => worker::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if output::stdout_closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            output::print_error(&e);
            ExitCode::FAILURE
        }
    }
}
