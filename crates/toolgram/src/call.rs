//! `toolgram call`: tools file + prompt or messages → a `toolgram-runtime` request on the
//! embedded model or a provider, the reply printed as an OpenAI assistant message (or, with
//! `--events`, one JSON line per streamed event); with `--mcp`, the runtime's tool loop over
//! those servers' tools, each call run on stderr as it ends (with `--events`, a `tool_step`
//! line each).
//!
//! What can be refused without a model (the tools, the tool choice, a response format) is
//! refused before the model is loaded; the grammar is compiled once, by the loaded engine in
//! the model's own call syntax, and kept for the run (`Runtime::ready`). Argument parsing
//! and printing only: the run stage is the runtime's.

use crate::output::{CliError, read_text, say};
use clap::Args;
use std::path::PathBuf;
use toolgram_core::define::request::{Mode, Think};
use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
use toolgram_engine::EngineOptions;
use toolgram_runtime::prefix_cache::PrefixCacheConfig;
use toolgram_runtime::{
    Backend, EmbeddedConfig, Offered, Ready, Request, RetryPolicy, RunError, Runtime, Sampling,
    Sink, SourceTool, ToolLoop, ToolSources, ToolStep, check_offer, named_syntax, read_tools_file,
};

#[derive(Args)]
pub(crate) struct CallArgs {
    /// JSON file with OpenAI-style function tools (an array, or {"tools": [...]}); required
    /// unless --mcp gives tools.
    #[arg(long, required_unless_present = "mcp")]
    pub tools: Option<PathBuf>,
    /// An MCP server (repeatable): the command line that starts it (stdio), or its
    /// `http(s)://` URL (streamable HTTP). Its tools are
    /// offered beside --tools, and `call` runs their calls on it in a loop — each result
    /// back to the model as a tool message — until the model answers; every call run is
    /// listed in `toolgram.steps` and on stderr as it ends.
    #[arg(long = "mcp", value_name = "SERVER")]
    pub mcp: Vec<String>,
    /// With --mcp: most replies whose calls the loop runs before it stops and prints the
    /// last one (its calls unrun, said in its warnings).
    #[arg(long, default_value_t = toolgram_runtime::DEFAULT_MAX_STEPS)]
    pub max_steps: usize,
    /// With --mcp: seconds a server has to start, or to answer one request, before it is a
    /// `tool_source_error`.
    #[arg(long, default_value_t = 60)]
    pub mcp_timeout_s: u64,
    /// auto, none, required, or a tool name.
    #[arg(long, default_value = "auto")]
    pub tool_choice: String,
    /// Allow more than one call.
    #[arg(long)]
    pub parallel_tool_calls: bool,
    #[command(flatten)]
    pub levers: crate::args::LeverArgs,
    /// Registry model name or role, a path to any GGUF, or an `hf:OWNER/REPO[:QUANT]` reference
    /// (fetched from the Hugging Face Hub, sha256-checked; default: the default model).
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
    #[command(flatten)]
    pub engine: crate::args::EngineArgs,
    /// Neither read nor write the prompt-prefix cache on disk (`toolgram cache list`): the
    /// whole prompt is evaluated.
    #[arg(long)]
    pub no_cache: bool,
    /// System message.
    #[arg(long)]
    pub system: Option<String>,
    /// JSON file with an OpenAI messages array (earlier turns, tool results).
    #[arg(long)]
    pub messages: Option<PathBuf>,
    /// grammar: the call and its arguments' schema are enforced while decoding; json: only
    /// the call shape and tool name are, the schema is checked after parsing (a plain JSON
    /// mode); prompt: nothing is enforced while decoding, everything is checked after.
    #[arg(long, default_value = "grammar", value_parser = crate::args::mode)]
    pub mode: Mode,
    /// Also in grammar and json modes, write prompt mode's instructions (what --tool-choice
    /// demands and an example call for each of the first three tools, in the model's syntax) into the system prompt.
    /// Embedded engine only.
    #[arg(long)]
    pub few_shot: bool,
    /// A reasoning block before the answer: off, optional or required — the model family's
    /// own ([THINK]…[/THINK] for Mistral), else <think>…</think> — returned as reasoning_content.
    #[arg(long, default_value = "off", value_parser = crate::args::think)]
    pub think: Think,
    /// Most tokens of reasoning before the block's closing marker is forced in (default: 3/4
    /// of --max-tokens).
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
    /// A call identical to one already made in the `--messages` conversation: `forbid` leaves
    /// it out under --tool-choice auto where it repeats a call made since the user's last
    /// message or one of the latest turn of calls (the model answers in text or makes another
    /// call; tools marked "x-toolgram": {"repeatable": true} are exempt; a call of an earlier
    /// user turn, with calls since, may be made again: on BFCL's 800 multi-turn answers the
    /// guard then leaves out none, against 4 conversations' right calls when it looked at
    /// every earlier call), `list` makes it and lists it, `allow` makes it.
    #[arg(long, default_value = "forbid", value_parser = crate::args::repeats)]
    pub repeats: toolgram_runtime::Repeats,
    /// Refuse tools whose schemas use keywords toolgram does not know (by default they are
    /// annotations: listed under `toolgram.warnings` and on stderr, never enforced).
    #[arg(long)]
    pub strict_schemas: bool,
    /// Print the reply as it is decoded: one JSON object per line (`content`,
    /// `reasoning`, `tool_call_start`, `tool_call_delta`, `tool_call_end`, `retry`), the last
    /// line the whole assistant message.
    #[arg(long)]
    pub events: bool,
    /// A remote provider instead of the embedded engine (`--model` is then its model id).
    #[command(flatten)]
    pub provider: crate::provider::ProviderArgs,
    /// The user's request (appended after --messages).
    pub prompt: Option<String>,
}

/// The `--tools` file, for a command that needs one (`bench call`, `bench server-call`).
pub(crate) fn tools_path(args: &CallArgs) -> anyhow::Result<&std::path::Path> {
    args.tools
        .as_deref()
        .ok_or_else(|| CliError::new("invalid_request", "this command needs --tools").into())
}

/// The MCP servers `--mcp` declares, started and their tools listed (`None` without any).
fn mcp_sources(args: &CallArgs) -> anyhow::Result<Option<ToolSources>> {
    if args.mcp.is_empty() {
        return Ok(None);
    }
    eprintln!("mcp: starting {} server(s)…", args.mcp.len());
    let timeout = std::time::Duration::from_secs(args.mcp_timeout_s);
    // A server is named by its command line.
    let declared: Vec<(String, String)> = args.mcp.iter().map(|c| (c.clone(), c.clone())).collect();
    let sources = ToolSources::start(&declared, timeout).map_err(RunError::from)?;
    let names: Vec<String> = sources
        .tools()
        .map_err(RunError::from)?
        .into_iter()
        .map(|t| t.tool.name)
        .collect();
    eprintln!("mcp: {} tool(s): {}", names.len(), names.join(", "));
    Ok(Some(sources))
}

/// A tool loop's events as JSON lines, printed as they come (the loop runs on its own thread).
fn print_loop_events(runtime: &Runtime, ready: Ready, lp: &ToolLoop) -> anyhow::Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let sink = Sink::new(move |e| {
                let _ = tx.send(e);
            });
            runtime.stream_tool_loop(ready, lp, &[], &sink);
        });
        for event in rx {
            if let Some(line) = crate::output::event_line(event)? {
                say!("{line}")?;
            }
        }
        Ok(())
    })
}

pub(crate) fn messages(args: &CallArgs) -> anyhow::Result<Vec<ChatMessage>> {
    let mut msgs = Vec::new();
    if let Some(s) = &args.system {
        msgs.push(ChatMessage::text("system", s.clone()));
    }
    if let Some(p) = &args.messages {
        let text = read_text(p, "messages file")?;
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

/// The runtime request for these arguments.
pub(crate) fn request(args: &CallArgs, msgs: Vec<ChatMessage>, tools: ToolSet) -> Request {
    let mut req = Request::new(msgs, tools);
    req.shape.choice = ToolChoice::from_cli(&args.tool_choice);
    req.shape.parallel = args.parallel_tool_calls;
    req.shape.mode = args.mode;
    req.shape.think = args.think;
    req.few_shot = args.few_shot;
    req.sampling = Sampling {
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        seed: args.seed,
        think_budget: args.think_budget,
        ..Sampling::default()
    };
    args.levers.apply(&mut req);
    req.retry = RetryPolicy {
        max_attempts: args.max_attempts,
        consecutive_blocked: args.consecutive_blocked,
    };
    req.refuse_repeats = args.refuse_repeats;
    req.strict_schemas = args.strict_schemas;
    req.repeats = args.repeats;
    req.syntax = args.syntax.clone();
    req
}

pub(crate) fn run(args: CallArgs) -> anyhow::Result<()> {
    let tools = match &args.tools {
        Some(path) => read_tools_file(path)?,
        None => ToolSet::new(Vec::new())?,
    };
    let sources = mcp_sources(&args)?;
    let every = |_: &SourceTool| true;
    let none = |_: &SourceTool| false;
    let tool_loop = sources.as_ref().map(|sources| ToolLoop {
        sources,
        offer: &every,
        approval: &none,
        max_steps: args.max_steps,
        offered: Offered::read(sources, &every),
        deadline: None,
    });
    // The servers' tools join the pool once: the check, the grammar and the loop's first turn
    // all see the same one.
    let tools = match &tool_loop {
        Some(lp) => {
            let mut pool = tools.tools().to_vec();
            pool.extend(lp.offered.tools.iter().map(|t| t.tool.clone()));
            ToolSet::new(pool)?
        }
        None => tools,
    };
    let req = request(&args, messages(&args)?, tools);
    let backend = match args.provider.resolve(args.model.as_deref())? {
        Some(provider) => Backend::Provider(provider),
        None => {
            // What can be refused without a model is refused before one is loaded; the
            // grammar is compiled once the model is, in its own syntax (below).
            if let Some(name) = &args.syntax {
                named_syntax(name)?;
            }
            check_offer(&req)?;
            let chat_template = args
                .chat_template
                .as_ref()
                .map(|p| read_text(p, "chat template"))
                .transpose()?;
            Backend::Embedded(EmbeddedConfig {
                model: args.model.clone(),
                engine: EngineOptions {
                    chat_template,
                    syntax: args.syntax.clone(),
                    ..args.engine.options()
                },
                // A request's ballots decode together, one lane each.
                max_sessions: args.levers.votes,
                parallel: args.levers.votes,
                max_queue: args.levers.votes,
                prefix_cache: (!args.no_cache).then(PrefixCacheConfig::default),
                measure_speed: false,
            })
        }
    };
    let runtime = Runtime::new(backend)?;
    // The request's grammar, compiled once by the loaded engine and carried to the run.
    let ready = runtime.ready(req)?;
    if let Some(lp) = &tool_loop {
        let mut step = |s: &ToolStep| {
            let outcome = if s.is_error { "error" } else { "ok" };
            eprintln!(
                "mcp: {}({}) → {outcome} in {:.0} ms: {}",
                s.tool,
                s.arguments,
                s.ms,
                s.result.chars().take(200).collect::<String>()
            );
        };
        crate::output::print_checked(ready.checked());
        if args.events {
            return print_loop_events(&runtime, ready, lp);
        }
        let reply = runtime.run_tool_loop(ready, lp, &[], &mut step)?;
        say!("{}", reply.to_json())?;
        return Ok(());
    }
    crate::output::print_checked(ready.checked());
    if args.events {
        for event in runtime.stream(&ready)? {
            if let Some(line) = crate::output::event_line(event)? {
                say!("{line}")?;
            }
        }
        return Ok(());
    }
    say!("{}", runtime.run(&ready)?.to_json())?;
    Ok(())
}
