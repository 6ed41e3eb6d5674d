//! `toolgram call`: tools file + prompt or messages → one constrained call on the embedded
//! model (or a remote provider, see `provider.rs`), printed as an OpenAI assistant message.
//!
//! Everything that can be checked without a model (tools, tool choice, messages, the
//! compiled grammar) is checked before the model is loaded.

use crate::output::{CliError, assistant_message};
use anyhow::Context;
use clap::{Args, ValueEnum};
use serde_json::json;
use std::path::PathBuf;
use toolgram_core::compile::{CompileOptions, Mode, Think};
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, syntax, validate};
use toolgram_engine::{Engine, EngineModel, EngineOptions, Sampling, check_request, models};
use toolgram_retry::{FailedAttempt, RetryError, RetryPolicy};

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
    /// The reply may open with <think>…</think>.
    Optional,
    /// The reply must open with <think>…</think>.
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

#[derive(Args)]
pub struct CallArgs {
    /// JSON file with OpenAI-style function tools (an array, or {"tools": [...]}).
    #[arg(long)]
    pub tools: PathBuf,
    /// auto, none, required, or a tool name.
    #[arg(long, default_value = "auto")]
    pub tool_choice: String,
    /// Allow more than one call.
    #[arg(long)]
    pub parallel_tool_calls: bool,
    /// Registry model name or role, or a path to any GGUF (default: the default model).
    #[arg(long)]
    pub model: Option<String>,
    /// Jinja chat template file overriding the GGUF's.
    #[arg(long)]
    pub chat_template: Option<PathBuf>,
    /// Call syntax overriding detection (hermes, mistral, llama3-json, generic-json).
    #[arg(long)]
    pub syntax: Option<String>,
    /// Most tokens to generate.
    #[arg(long, default_value_t = 512)]
    pub max_tokens: usize,
    /// Sampling temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    /// Seed for sampling.
    #[arg(long)]
    pub seed: Option<u64>,
    /// CPU threads.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Context window in tokens.
    #[arg(long)]
    pub ctx_size: Option<u32>,
    /// System message.
    #[arg(long)]
    pub system: Option<String>,
    /// JSON file with an OpenAI messages array (earlier turns, tool results).
    #[arg(long)]
    pub messages: Option<PathBuf>,
    /// grammar: the call and its arguments' schema are enforced while decoding; json: only
    /// the call shape and tool name are, the schema is checked after parsing (a plain JSON
    /// mode); prompt: nothing is enforced while decoding, everything is checked after.
    #[arg(long, value_enum, default_value = "grammar")]
    pub mode: ModeArg,
    /// Allow or demand a <think>…</think> block before the answer (returned as
    /// reasoning_content).
    #[arg(long, value_enum, default_value = "off")]
    pub think: ThinkArg,
    /// Most tokens of reasoning before </think> is forced in (default: 3/4 of --max-tokens).
    #[arg(long)]
    pub think_budget: Option<usize>,
    /// Most attempts: a call that fails validation is sent back to the model with the error.
    #[arg(long, default_value_t = 3)]
    pub max_attempts: usize,
    /// Stop early when this many consecutive attempts fail with the same errors.
    #[arg(long, default_value_t = 2)]
    pub consecutive_blocked: usize,
    /// Refuse (exit non-zero) a reply that repeats an earlier call with the same arguments,
    /// instead of only reporting it.
    #[arg(long)]
    pub refuse_repeats: bool,
    /// Unknown schema keywords in the tools are listed as warnings and ignored instead of
    /// refusing the tools.
    #[arg(long)]
    pub lenient: bool,
    /// A remote provider instead of the embedded engine (`--model` is then its model id).
    #[command(flatten)]
    pub provider: crate::provider::ProviderArgs,
    /// The user's request (appended after --messages).
    pub prompt: Option<String>,
}

fn read(path: &PathBuf, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        CliError::new(
            "io_error",
            format!("cannot read {what} {}: {e}", path.display()),
        )
        .into()
    })
}

pub fn messages(args: &CallArgs) -> anyhow::Result<Vec<ChatMessage>> {
    let mut msgs = Vec::new();
    if let Some(s) = &args.system {
        msgs.push(ChatMessage::text("system", s.clone()));
    }
    if let Some(p) = &args.messages {
        let text = read(p, "messages file")?;
        let parsed: Vec<ChatMessage> = serde_json::from_str(&text).map_err(|e| {
            CliError::new(
                "invalid_messages",
                format!("{}: not an OpenAI messages array: {e}", p.display()),
            )
        })?;
        msgs.extend(parsed);
    }
    if let Some(p) = &args.prompt {
        msgs.push(ChatMessage::text("user", p.clone()));
    }
    if msgs.iter().all(|m| m.role == "system") {
        return Err(CliError::new("invalid_request", "give a PROMPT or --messages").into());
    }
    Ok(msgs)
}

pub fn run(args: CallArgs) -> anyhow::Result<()> {
    let all_tools = crate::tools_file::read(&args.tools)?;
    let choice = ToolChoice::from_cli(&args.tool_choice);
    let msgs = messages(&args)?;
    let (tools, filtered_out) = pool_for(all_tools, &msgs, &choice)?;
    if let Some(remote) = args.provider.resolve(args.model.as_deref())? {
        return crate::provider::call_remote(&args, remote, &tools, choice, &msgs);
    }
    // Everything checkable without a model is checked before one is loaded.
    let opts = CompileOptions {
        mode: args.mode.into(),
        think: args.think.into(),
        lenient: args.lenient,
        ..CompileOptions::default()
    };
    let checked = check_request(
        &tools,
        &choice,
        args.parallel_tool_calls,
        syntax::detect(""),
        &opts,
    )?;
    crate::grammar::refuse_or_list_unknown(&checked.ignored, true, "invalid_tools")?;
    crate::grammar::note_fallback(&checked);
    let chat_template = args
        .chat_template
        .as_ref()
        .map(|p| read(p, "chat template"))
        .transpose()?;
    let path = models::resolve(args.model.as_deref()).context("resolving the model")?;
    let opts = EngineOptions {
        threads: args.threads,
        n_ctx: args.ctx_size,
        chat_template,
        syntax: args.syntax.clone(),
        lenient: args.lenient,
    };
    let engine = Engine::load(&path, &opts)?;
    let mut session = engine.session()?;
    let mut model = EngineModel {
        session: &mut session,
        tools: &tools,
        choice: choice.clone(),
        parallel: args.parallel_tool_calls,
        mode: args.mode.into(),
        think: args.think.into(),
        sampling: Sampling {
            max_tokens: args.max_tokens,
            temperature: args.temperature,
            seed: args.seed,
            think_budget: args.think_budget,
            ..Sampling::default()
        },
        last: None,
        total_tokens: (0, 0),
    };
    let policy = RetryPolicy {
        max_attempts: args.max_attempts,
        consecutive_blocked: args.consecutive_blocked,
    };
    let outcome = match toolgram_retry::run(&mut model, &tools, &choice, &msgs, policy) {
        Ok(o) => o,
        Err(RetryError::Model { error, .. }) => return Err(error.into()),
        Err(e) => {
            let kind = match e {
                RetryError::Blocked { .. } => "retry_blocked",
                _ => "no_valid_call",
            };
            let details = json!({"attempts": failed_json(e.failed())});
            return Err(CliError::new(kind, e.to_string()).with(details).into());
        }
    };
    let Some(mut reply) = model.last.take() else {
        return Err(CliError::new("internal_error", "no attempt was recorded").into());
    };
    (reply.prompt_tokens, reply.completion_tokens) = model.total_tokens;
    let repeats = validate::repeated_calls(&msgs, &reply.tool_calls);
    if args.refuse_repeats && !repeats.is_empty() {
        let list: Vec<String> = repeats
            .iter()
            .map(|r| format!("call {} to `{}` repeats {}", r.index, r.tool, r.first_seen))
            .collect();
        return Err(CliError::new("repeated_call", list.join("; ")).into());
    }
    let mut msg = assistant_message(&reply, engine.syntax().name, engine.model_name());
    if reply
        .tool_calls
        .iter()
        .any(|c| tools.get(&c.name).is_some_and(|t| t.grammar.is_some()))
    {
        msg["tool_calls"] = json!(
            reply
                .tool_calls
                .iter()
                .map(|c| crate::tools_file::call_json(c, &tools))
                .collect::<Vec<_>>()
        );
    }
    msg["toolgram"]["attempts"] = json!(outcome.attempts);
    if !outcome.failed.is_empty() {
        msg["toolgram"]["failed_attempts"] = failed_json(&outcome.failed);
    }
    if !repeats.is_empty() {
        msg["toolgram"]["repeated_calls"] = json!(
            repeats
                .iter()
                .map(|r| json!({"index": r.index, "tool": r.tool, "first_seen": r.first_seen}))
                .collect::<Vec<_>>()
        );
    }
    if !filtered_out.is_empty() {
        msg["toolgram"]["filtered_out"] = json!(filtered_out);
    }
    println!("{msg}");
    Ok(())
}

fn failed_json(failed: &[FailedAttempt]) -> serde_json::Value {
    json!(
        failed
            .iter()
            .map(|f| json!({"attempt": f.attempt, "errors": f.errors, "raw": f.raw}))
            .collect::<Vec<_>>()
    )
}

/// The pool offered for this request: escape-hatch tools only when the user said one of
/// their trigger words (or named the tool), and the names left out.
fn pool_for(
    tools: ToolSet,
    msgs: &[ChatMessage],
    choice: &ToolChoice,
) -> anyhow::Result<(ToolSet, Vec<String>)> {
    let keep = validate::filter_pool(&tools, msgs, choice);
    if keep.len() == tools.tools().len() {
        return Ok((tools, Vec::new()));
    }
    let out = tools
        .tools()
        .iter()
        .enumerate()
        .filter(|(i, _)| !keep.contains(i))
        .map(|(_, t)| t.name.clone())
        .collect();
    Ok((
        tools
            .subset(&keep)
            .map_err(toolgram_engine::EngineError::from)?,
        out,
    ))
}
