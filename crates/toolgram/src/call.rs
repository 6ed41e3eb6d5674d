//! `toolgram call`: tools file + prompt or messages → a `toolgram-runtime` request on the
//! embedded model or a provider, the reply printed as an OpenAI assistant message (or, with
//! `--events`, one JSON line per streamed event).
//!
//! What can be refused without a model (the tools, the tool choice, a response format) is
//! refused before the model is loaded; the grammar is compiled once, by the loaded engine in
//! the model's own call syntax, and kept for the run (`Runtime::check`). Argument parsing
//! and printing only: the run stage is the runtime's.

use crate::args::{ModeArg, ThinkArg};
use crate::output::{CliError, read_text, say};
use clap::Args;
use std::path::PathBuf;
use toolgram_core::{ChatMessage, ToolChoice, ToolSet, syntax};
use toolgram_engine::EngineOptions;
use toolgram_runtime::prefix_cache::PrefixCacheConfig;
use toolgram_runtime::{
    Backend, EmbeddedConfig, Request, RetryPolicy, Runtime, SamplingOptions, check_offer,
    read_tools_file,
};

#[derive(Args)]
pub(crate) struct CallArgs {
    /// JSON file with OpenAI-style function tools (an array, or {"tools": [...]}).
    #[arg(long)]
    pub tools: PathBuf,
    /// auto, none, required, or a tool name.
    #[arg(long, default_value = "auto")]
    pub tool_choice: String,
    /// Allow more than one call.
    #[arg(long)]
    pub parallel_tool_calls: bool,
    /// Plan, then calls (with --parallel-tool-calls): the reply first states how many calls
    /// it will make (returned as reasoning), then makes exactly that many.
    #[arg(long)]
    pub plan: bool,
    /// Added to the logits of the tokens that open a call where the reply may call or not
    /// (tool_choice auto; under --plan, to the counts 1-9), -100 to 100: above 0 calls more
    /// often, below 0 declines more often (default: -2 under --plan, else 0; docs/eval.md, "Call or text").
    #[arg(long, allow_negative_numbers = true, value_parser = crate::args::call_bias)]
    pub call_bias: Option<f32>,
    /// Ballots: answer each request this many times at once (the first as asked, the others
    /// sampled at 0.7 or the request's temperature if higher) and return the answer most of them give, calls compared as JSON values
    /// (docs/eval.md, "Votes").
    #[arg(long, default_value_t = 1, value_parser = crate::args::votes)]
    pub votes: usize,
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
    #[arg(long, help = crate::args::THREADS_HELP)]
    pub threads: Option<u32>,
    #[command(flatten)]
    pub gpu: crate::args::GpuArgs,
    /// Context window in tokens.
    #[arg(long)]
    pub ctx_size: Option<u32>,
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
    #[arg(long, value_enum, default_value = "grammar")]
    pub mode: ModeArg,
    /// Also in grammar and json modes, write prompt mode's instructions (what --tool-choice
    /// demands and an example call for each of the first three tools, in the model's syntax) into the system prompt.
    /// Embedded engine only.
    #[arg(long)]
    pub few_shot: bool,
    /// Allow or demand a reasoning block before the answer — the model family's own
    /// ([THINK]…[/THINK] for Mistral), else <think>…</think> — returned as reasoning_content.
    #[arg(long, value_enum, default_value = "off")]
    pub think: ThinkArg,
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
    /// it out under --tool-choice auto (the model answers in text or makes another call; tools
    /// marked "x-toolgram": {"repeatable": true} are exempt), `list` makes it and lists it,
    /// `allow` makes it.
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
    req.tool_choice = ToolChoice::from_cli(&args.tool_choice);
    req.parallel_tool_calls = args.parallel_tool_calls;
    req.mode = args.mode.into();
    req.think = args.think.into();
    req.few_shot = args.few_shot;
    req.sampling = SamplingOptions {
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        seed: args.seed,
        think_budget: args.think_budget,
        plan: args.plan,
        call_bias: args.call_bias,
        votes: args.votes,
        ..SamplingOptions::default()
    };
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
    let tools = read_tools_file(&args.tools)?;
    let req = request(&args, messages(&args)?, tools);
    let backend = match args.provider.resolve(args.model.as_deref())? {
        Some(provider) => Backend::Provider(provider),
        None => {
            // What can be refused without a model is refused before one is loaded; the
            // grammar is compiled once the model is, in its own syntax (below).
            if let Some(name) = &args.syntax
                && syntax::by_name(name).is_none()
            {
                let unknown = format!("unknown call syntax `{name}`");
                return Err(CliError::new("invalid_request", unknown).into());
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
                    threads: args.threads,
                    n_ctx: args.ctx_size,
                    chat_template,
                    syntax: args.syntax.clone(),
                    gpu: args.gpu.options(),
                    ..EngineOptions::default()
                },
                // A request's ballots decode together, one lane each.
                max_sessions: args.votes,
                parallel: args.votes,
                max_queue: args.votes,
                prefix_cache: (!args.no_cache).then(PrefixCacheConfig::default),
            })
        }
    };
    let runtime = Runtime::new(backend)?;
    // The request's grammar, compiled by the loaded engine and kept for the run.
    let mut req = req;
    crate::output::print_checked(&runtime.check(&mut req)?);
    if args.events {
        for event in runtime.stream(&req)? {
            if let Some(line) = crate::output::event_line(event)? {
                say!("{line}")?;
            }
        }
        return Ok(());
    }
    say!("{}", runtime.run(&req)?.to_json())?;
    Ok(())
}
