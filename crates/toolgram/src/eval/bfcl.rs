//! `toolgram eval bfcl`: BFCL categories × modes on the embedded model (or a provider), and a
//! peer server's own tool calling beside them (`--provider llama-server`, or any
//! OpenAI-compatible `--base-url`: mode `native`), under toolgram's protocol or BFCL's.

use super::harness::{Progress, RunArgs, report};
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use toolgram_eval::Protocol;
use toolgram_eval::bfcl::{self, DEFAULT_CATEGORIES, Item};
use toolgram_eval::peer::Peer;
use toolgram_eval::report as table;
use toolgram_eval::run::{EvalMode, Targets, pending, run_items};
use toolgram_runtime::Runtime;

/// Arguments of `toolgram eval bfcl`.
#[derive(Args)]
pub(crate) struct BfclArgs {
    /// Folder with `BFCL_v<N>_<category>.json` and `possible_answer/` (default: the BFCL v4
    /// copy in the checkout toolgram was built from, `testdata/bfcl`).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/bfcl"))]
    data: PathBuf,
    /// Categories, comma-separated (default: the seven in `--data`).
    #[arg(long, value_delimiter = ',')]
    category: Vec<String>,
    /// Modes, comma-separated: grammar, json, prompt (the same prompt — prompt mode's
    /// instructions — so only what is enforced differs; grammar and json on the embedded
    /// model), grammar-template, json-template (the chat template's tool block for a prompt,
    /// as `toolgram call` has it; a provider's own rendering), native (a peer's own tool
    /// calling; needs --provider or --base-url). Default: grammar,json,prompt; native with a
    /// provider or base URL; under --protocol bfcl, grammar-template (embedded) or native.
    #[arg(long, value_delimiter = ',')]
    mode: Vec<String>,
    /// Items per category, spread evenly over the file (default: all).
    #[arg(long)]
    limit: Option<usize>,
    /// Run nothing: score every record in `--out` again from its stored calls with this
    /// version's checker (records from an older toolgram), rewrite `items.jsonl`, report.
    #[arg(long)]
    rescore: bool,
    #[command(flatten)]
    run: RunArgs,
}

/// `--rescore`: every record of `items` in `--out` scored again; the others kept as they are.
fn rescore(
    args: &BfclArgs,
    items: &[Item],
    modes: &[EvalMode],
    categories: &[String],
) -> anyhow::Result<()> {
    let (records, changed) = bfcl::rescore_file(&args.run.items_path()?, items)?;
    eprintln!("eval: {records} records scored again, {changed} verdicts changed");
    // What ran the records stays said: the run of the last report, marked rescored.
    let before = std::fs::read_to_string(args.run.out().join("results.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .map(|r| r["run"].clone());
    let mut run = match before {
        Some(Value::Object(run)) => Value::Object(run),
        _ => json!({"data": args.data, "categories": categories}),
    };
    run["rescored"] = json!(true);
    report(
        &args.run,
        modes,
        categories,
        table::table,
        run,
        "BFCL (rescored)",
    )
}

pub(super) fn run(mut args: BfclArgs) -> anyhow::Result<()> {
    args.run.eval = "bfcl";
    let categories: Vec<String> = if args.category.is_empty() {
        DEFAULT_CATEGORIES.iter().map(|c| (*c).to_owned()).collect()
    } else {
        args.category.clone()
    };
    if args.run.provider.provider.is_none() && args.run.provider.base_url.is_some() {
        // A bare base URL is an OpenAI-compatible server: toolgram serve, llama-server, vLLM.
        args.run.provider.provider = Some("openai".to_owned());
    }
    let provider = args.run.provider.resolve(args.run.model.as_deref())?;
    let protocol = args.run.options().protocol;
    let modes = EvalMode::for_bfcl(&args.mode, provider.is_some(), protocol)?;
    let items = bfcl::read_items(&args.data, &categories, args.limit)?;
    if args.rescore {
        return rescore(&args, &items, &modes, &categories);
    }
    let (done, mut writer) = args.run.records()?;

    let peer = match (&provider, modes.contains(&EvalMode::Native)) {
        (Some(p), true) => Some(Peer::new(&p.provider)),
        (None, true) => anyhow::bail!("mode native needs --provider (e.g. llama-server)"),
        _ => None,
    };
    let runtime = if modes.iter().any(|m| *m != EvalMode::Native) {
        Some(args.run.runtime(provider.clone(), &modes)?)
    } else {
        None
    };
    let model = runtime
        .as_ref()
        .map(Runtime::model_name)
        .or_else(|| provider.as_ref().and_then(|p| p.provider.model.clone()))
        .unwrap_or_default();

    let mut progress = Progress::new(pending(&items, &modes, protocol, &done));
    let targets = Targets {
        runtime: runtime.as_ref(),
        peer: peer.as_ref(),
    };
    let sink = progress.sink(&mut writer);
    run_items(&items, &modes, &targets, args.run.options(), &done, sink)?;
    progress.finish();

    let run = json!({
        "model": model,
        "provider": provider.as_ref().map(|p| p.provider.kind.name()),
        "data": args.data,
        "categories": categories,
        "limit": args.limit,
        "tool_choice": match protocol {
            Protocol::Toolgram => json!("auto"),
            Protocol::Bfcl => json!(null),
        },
        "parallel_tool_calls": protocol == Protocol::Toolgram,
    });
    let title = format!("BFCL · {model}");
    report(&args.run, &modes, &categories, table::table, run, &title)
}
