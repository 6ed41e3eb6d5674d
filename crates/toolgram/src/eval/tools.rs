//! `toolgram eval tools`: each built-in grammar tool on its tasks, as the freeform grammar
//! tool and as its JSON fallback function; the call is run and the outcome compared.

use super::{Progress, RunArgs, modes, report_modes, write_outputs};
use clap::Args;
use serde_json::json;
use toolgram_eval::record::read_records;
use toolgram_eval::report;
use toolgram_eval::run::EvalMode;
use toolgram_eval::tools::{TOOLS, TaskFile, pending, run_tasks, task_file};

/// Arguments of `toolgram eval tools`.
#[derive(Args)]
pub struct ToolsArgs {
    /// Tools, comma-separated (default: every built-in tool with tasks).
    #[arg(long, value_delimiter = ',')]
    tool: Vec<String>,
    /// Modes, comma-separated: grammar (the freeform grammar tool), fallback (its JSON fallback
    /// function under strict JSON: schema enforced, text free), json (the same in json mode:
    /// arguments free), prompt. Default: grammar,fallback,json.
    #[arg(long, value_delimiter = ',')]
    mode: Vec<String>,
    /// Tasks per tool, the first N (default: all).
    #[arg(long)]
    limit: Option<usize>,
    #[command(flatten)]
    run: RunArgs,
}

pub fn run(args: ToolsArgs) -> anyhow::Result<()> {
    let tools: Vec<String> = if args.tool.is_empty() {
        TOOLS.iter().map(|t| (*t).to_owned()).collect()
    } else {
        args.tool.clone()
    };
    let modes = modes(
        &args.mode,
        &[EvalMode::Grammar, EvalMode::Fallback, EvalMode::Json],
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
    let runtime = args.run.runtime(provider.clone())?;
    let model = runtime.model_name();

    let todo = files.iter().map(|f| pending(f, &modes, &done)).sum();
    let mut progress = Progress::new(todo);
    for file in &files {
        run_tasks(&runtime, file, &modes, args.run.options(), &done, |r| {
            writer.write(r)?;
            progress.record(r);
            Ok(())
        })?;
    }
    progress.finish();

    let records = read_records(&args.run.items_path()?)?;
    let mode_names = report_modes(&modes, &records, &tools);
    let rows = report::rows(&records, &tools, &mode_names);
    print!("{}", report::tools_table(&rows));
    let run = json!({
        "model": model,
        "provider": provider.as_ref().map(|p| p.provider.kind.name()),
        "tools": tools,
        "modes": mode_names,
        "limit": args.limit,
        "max_tokens": args.run.max_tokens,
        "max_attempts": args.run.max_attempts,
        "tool_choice": "required",
        "parallel_tool_calls": false,
        "temperature": 0,
    });
    write_outputs(
        &args.run.out,
        &rows,
        run,
        &format!("Grammar tools · {model}"),
    )
}
