//! `toolgram eval tools`: each built-in grammar tool on its tasks, as the freeform grammar
//! tool and as its JSON fallback function; the call is run and the outcome compared.

use super::harness::{Progress, RunArgs, report};
use clap::Args;
use serde_json::json;
use toolgram_eval::report as table;
use toolgram_eval::run::EvalMode;
use toolgram_eval::tools::{TOOLS, TaskFile, pending, run_tasks, task_file};

/// Arguments of `toolgram eval tools`.
#[derive(Args)]
pub(crate) struct ToolsArgs {
    /// Tools, comma-separated (default: every built-in tool with tasks).
    #[arg(long, value_delimiter = ',')]
    tool: Vec<String>,
    /// Modes, comma-separated: grammar-template (the freeform grammar tool), fallback-template
    /// (its JSON fallback function under strict JSON: schema enforced, text free),
    /// json-template (the same in json mode: arguments free) — the tool in the chat template's
    /// tool block; grammar, fallback, json (the same given prompt mode's instructions), prompt.
    /// Default: grammar-template,fallback-template,json-template.
    #[arg(long, value_delimiter = ',')]
    mode: Vec<String>,
    /// Tasks per tool, the first N (default: all).
    #[arg(long)]
    limit: Option<usize>,
    #[command(flatten)]
    run: RunArgs,
}

pub(super) fn run(mut args: ToolsArgs) -> anyhow::Result<()> {
    args.run.eval = "tools";
    let tools: Vec<String> = if args.tool.is_empty() {
        TOOLS.iter().map(|t| (*t).to_owned()).collect()
    } else {
        args.tool.clone()
    };
    let modes = EvalMode::parse_list(
        &args.mode,
        &[
            EvalMode::GrammarTemplate,
            EvalMode::FallbackTemplate,
            EvalMode::JsonTemplate,
        ],
    )?;
    let mut files: Vec<TaskFile> = Vec::new();
    for t in &tools {
        let mut file = task_file(t)?;
        if let Some(n) = args.limit {
            file.tasks.truncate(n);
        }
        files.push(file);
    }
    let provider = args.run.provider.resolve(args.run.model.as_deref())?;
    let (done, mut writer) = args.run.records()?;
    let runtime = args.run.runtime(provider.clone(), &modes)?;
    let model = runtime.model_name();

    let todo = files.iter().map(|f| pending(f, &modes, &done)).sum();
    let mut progress = Progress::new(todo);
    for file in &files {
        let sink = progress.sink(&mut writer);
        run_tasks(&runtime, file, &modes, args.run.options(), &done, sink)?;
    }
    progress.finish();

    let run = json!({
        "model": model,
        "provider": provider.as_ref().map(|p| p.provider.kind.name()),
        "tools": tools,
        "limit": args.limit,
        "tool_choice": "required",
        "parallel_tool_calls": false,
    });
    let title = format!("Grammar tools · {model}");
    report(&args.run, &modes, &tools, table::tools_table, run, &title)
}
