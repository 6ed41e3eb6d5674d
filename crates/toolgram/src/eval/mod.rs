//! `toolgram eval bfcl | tools`: evaluations on the embedded model (or a provider) with a
//! progress bar while they run, then the table on stdout and `items.jsonl`, `results.json`,
//! `chart.svg` in `--out` — over every mode recorded there, so a run resumed into the folder
//! of another reports both side by side.
//!
//! Argument parsing and printing only: reading, running and scoring live in `toolgram-eval`.

mod bfcl;
mod harness;
mod tools;

use clap::Subcommand;

/// `toolgram eval …`
#[derive(Subcommand)]
pub(crate) enum EvalCommand {
    /// BFCL: accuracy, validity, convergence, tokens and latency per category and mode.
    Bfcl(bfcl::BfclArgs),
    /// The built-in grammar tools against their JSON form: task success after running the
    /// call, validity, tokens and latency per tool and mode.
    Tools(tools::ToolsArgs),
}

/// Run an `eval` subcommand.
pub(crate) fn run(cmd: EvalCommand) -> anyhow::Result<()> {
    match cmd {
        EvalCommand::Bfcl(args) => bfcl::run(args),
        EvalCommand::Tools(args) => tools::run(args),
    }
}
