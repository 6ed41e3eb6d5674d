//! `toolgram serve`: the OpenAI-compatible server (`toolgram-server`) on the embedded model
//! (fetched on first use) or a configured provider. Argument parsing only.

use crate::provider::ProviderArgs;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use std::time::Duration;
use toolgram_engine::EngineOptions;
use toolgram_runtime::prefix_cache::PrefixCacheConfig;
use toolgram_runtime::{
    EmbeddedConfig, ModelDecl, ModelEntry, ModelSet, Residency, RunError, ToolSources, add_aliases,
    embedded_entries, read_models_file,
};
use toolgram_server::ServerConfig;
use toolgram_server::app::{HostedTools, Timeout};

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0: any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Registry model name or role, a GGUF path or an `hf:OWNER/REPO[:QUANT]` reference
    /// (default: the default model). Repeat it to serve several: a request's `model` picks
    /// one by its id (the file's name) or the name given here, the first by default. With
    /// --provider, the provider's model id.
    #[arg(long)]
    pub model: Vec<String>,
    /// A TOML file of models to serve, after any --model: `[[model]]` tables with `model`
    /// and optionally `name`, `aliases`, `ctx_size`, `gpu_layers`, `chat_template`,
    /// `syntax` (docs/server.md).
    #[arg(long, value_name = "FILE")]
    pub models: Option<std::path::PathBuf>,
    /// Let a models file name paths outside its own folder (`model` files and
    /// `chat_template`s; by default each must be inside it, after `..` and links, so a
    /// models file cannot point the server at any file on the machine).
    #[arg(long)]
    pub models_outside_folder: bool,
    /// Models loaded at once: loading one more unloads the least recently used, once its
    /// requests in flight end (within the loading request's --timeout-s; else it stays
    /// loaded and that request gets 503 `model_swap`). Models load on first use; the first at
    /// start. Default 3, Ollama's on a machine without a GPU: any client can name any
    /// declared model, so without a bound any client could load them all.
    #[arg(long, value_name = "N", default_value_t = toolgram_runtime::model_set::DEFAULT_MAX_LOADED)]
    pub max_loaded: usize,
    /// Seconds a model stays loaded at least before it is unloaded for another (a load
    /// waits for it), so no client can force loads faster than one per this. Default 10: a
    /// small model loads in a second or two on 2 cores.
    #[arg(long, value_name = "S", default_value_t = toolgram_runtime::model_set::DEFAULT_MIN_RESIDENCY.as_secs_f64())]
    pub min_residency_s: f64,
    /// Clients must send `Authorization: Bearer KEY` (default: $TOOLGRAM_API_KEY if set).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Requests that may wait for the engine; more get 429.
    #[arg(long, default_value_t = 16)]
    pub max_queue: usize,
    /// Sessions (lanes of the llama.cpp context, each with its own KV cache) kept for
    /// tool-prefix reuse across requests; at least --parallel.
    #[arg(long, default_value_t = 4)]
    pub max_sessions: usize,
    /// Requests decoding at once, their tokens batched into one llama.cpp decode
    /// (continuous batching); more wait in the queue.
    #[arg(long, default_value_t = 4)]
    pub parallel: usize,
    /// Neither read nor write the prompt-prefix cache on disk (prefixes are still reused in
    /// memory across requests).
    #[arg(long)]
    pub no_cache: bool,
    /// Longest a request may take, in seconds, from its arrival: loading its model, its
    /// check, its wait in the queue and its run under one deadline (504 past it). Default:
    /// sized to this machine — each model is timed when it loads (a 256-token prompt and 8
    /// decode steps), and a request gets what a prompt filling its context and a 2,048-token
    /// reply take at those rates (a prompt's per-token time doubling every 6,000 tokens of
    /// it, as measured), 300 s at least; `/health` says each model's rates and deadline. On
    /// 2 CPU cores the default model's is about 16 minutes: Claude Code's first turn (18.9k
    /// tokens) took about 320 s there (inferred: its two requests
    /// took 334.6 s together, the second cached), past the fixed 300 s this replaced.
    #[arg(long)]
    pub timeout_s: Option<u64>,
    /// The most tokens a reply is given (a request asking for more is capped, and the reply
    /// says so). Default: the model's context (--ctx-size), so what a client asks for is
    /// honoured wherever the prompt leaves room for it. A request that names no limit gets
    /// 2,048, or this if lower.
    #[arg(long)]
    pub max_tokens: Option<usize>,
    /// Most calls one reply may make under parallel_tool_calls: the grammar ends the reply
    /// after them (0: unbounded). Stops a small model writing call after call until
    /// max_tokens cuts it.
    #[arg(long, default_value_t = 8)]
    pub max_calls_per_reply: usize,
    #[command(flatten)]
    pub levers: crate::args::LeverArgs,
    /// A call identical to one already made in the conversation: `forbid` leaves it out under
    /// tool_choice auto where it repeats a call made since the user's last message or one of
    /// the latest turn of calls (the model answers in text or makes another call; tools marked
    /// "x-toolgram": {"repeatable": true} are exempt; a call of an earlier user turn, with
    /// calls since, may be made again: on BFCL's 800 multi-turn answers the guard then leaves
    /// out none, against 4 conversations' right calls when it looked at every earlier call),
    /// `list` makes it and lists it, `allow` makes it. A request's `repeats` field overrides
    /// it.
    #[arg(long, default_value = "forbid", value_parser = crate::args::repeats)]
    pub repeats: toolgram_runtime::Repeats,
    /// Refuse tools whose schemas use keywords toolgram does not know (`optional`, vendor
    /// keys, …) with a 400. By default they are annotations, as JSON Schema says: accepted,
    /// never enforced, listed in the reply's `toolgram.warnings` and logged once. A request's
    /// `strict_schemas` field overrides it.
    #[arg(long)]
    pub strict_schemas: bool,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_body_bytes: usize,
    /// Connections open at once; one more is answered 503 and closed.
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
    /// Seconds a client may take to send a request's headers, and a kept-alive connection
    /// may sit idle; the connection is closed past it.
    #[arg(long, default_value_t = 10)]
    pub header_read_timeout_s: u64,
    /// Seconds a client may take to send a request's body (408 past it).
    #[arg(long, default_value_t = 30)]
    pub body_read_timeout_s: u64,
    /// Seconds a write to a client may wait while the client reads nothing (its socket
    /// full); the connection is closed past it and its run cancelled.
    #[arg(long, default_value_t = 30)]
    pub write_timeout_s: u64,
    /// Most ballots (`votes`) one request may ask for; a request's ballots are admitted to
    /// the queue together or not at all, so this bounds what one request takes of it.
    #[arg(long, default_value_t = toolgram_server::app::DEFAULT_MAX_VOTES)]
    pub max_votes: usize,
    /// On SIGTERM or Ctrl-C, seconds requests in flight get to finish; then their runs
    /// are stopped, each answering with what it decoded (503, or a stream's error event),
    /// and the server exits.
    #[arg(long, alias = "drain-timeout", default_value_t = 30)]
    pub drain_timeout_s: u64,
    /// Bytes the responses stored for previous_response_id may hold together, oldest
    /// dropped first; a response over a quarter of it is not stored.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_stored_bytes: usize,
    #[command(flatten)]
    pub engine: crate::args::EngineArgs,
    /// A Jinja chat template overriding the one in the GGUF (its tool-call syntax and
    /// reasoning block are detected from it).
    #[arg(long, value_name = "FILE")]
    pub chat_template: Option<std::path::PathBuf>,
    /// Call syntax overriding detection from the template.
    #[arg(long)]
    pub syntax: Option<String>,
    /// Another name clients may use for the served model, listed by /v1/models
    /// (repeatable): `--model-alias gpt-5-codex=qwen2.5-coder-0.5b-instruct-q4_k_m`.
    #[arg(long, value_name = "NAME=MODEL", value_parser = alias)]
    pub model_alias: Vec<(String, String)>,
    /// Answer a model name that is neither the served model nor an alias with 404 (default:
    /// any name is served by the one model, as llama-server does).
    #[arg(long)]
    pub strict_model_names: bool,
    /// Hosted tools (web_search, file_search, code_interpreter, Anthropic's server tools…)
    /// this server cannot run: `filter` leaves them out of the model's pool and lists them in
    /// the reply's toolgram.filtered_out; `refuse` answers 400.
    #[arg(long, default_value = "filter",
        value_parser = PossibleValuesParser::new(["filter", "refuse"]).map(|s| match s.as_str() {
            "refuse" => HostedTools::Refuse,
            _ => HostedTools::Filter,
        }))]
    pub hosted_tools: HostedTools,
    /// An MCP server requests may use, declared as NAME=SERVER (SERVER: the command line that
    /// starts it, stdio, or its http(s):// URL, streamable HTTP; repeatable), started with the
    /// server. A Responses request lists
    /// `{"type": "mcp", "server_label": NAME}`, an Anthropic request an `mcp_servers` entry
    /// named NAME: the server runs the calls in a loop and answers with every step
    /// (docs/mcp.md). No request can reach a server not declared here.
    #[arg(long = "mcp", value_name = "NAME=SERVER", value_parser = mcp_declaration)]
    pub mcp: Vec<(String, String)>,
    /// Seconds an MCP server has to start, or to answer one request, before it is a
    /// `tool_source_error`.
    #[arg(long, default_value_t = 60)]
    pub mcp_timeout_s: u64,
    /// Most replies whose calls a request's MCP loop runs before it answers with the last
    /// (its calls unrun, in toolgram.pending_calls).
    #[arg(long, default_value_t = toolgram_runtime::DEFAULT_MAX_STEPS)]
    pub max_steps: usize,
    /// A remote provider behind the server (a gateway adding grammar, validation, retries).
    #[command(flatten)]
    pub provider: ProviderArgs,
}

fn mcp_declaration(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, server)) if !name.is_empty() && !server.trim().is_empty() => {
            Ok((name.to_owned(), server.to_owned()))
        }
        _ => Err(format!(
            "`{s}`: write NAME=SERVER (SERVER: the command line that starts it)"
        )),
    }
}

fn alias(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, model)) if !name.is_empty() && !model.is_empty() => {
            Ok((name.to_owned(), model.to_owned()))
        }
        _ => Err(format!("`{s}`: write NAME=MODEL")),
    }
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    let chat_template = args
        .chat_template
        .as_ref()
        .map(|p| crate::output::read_text(p, "chat template"))
        .transpose()?;
    let provider = match (args.model.as_slice(), &args.models) {
        ([] | [_], None) => args
            .provider
            .resolve(args.model.first().map(String::as_str))?,
        _ => None,
    };
    let entries = match provider {
        Some(p) => vec![ModelEntry::provider(p)],
        None => {
            let base = EmbeddedConfig {
                model: None,
                engine: EngineOptions {
                    default_ctx_cap: Some(32768),
                    chat_template,
                    syntax: args.syntax.clone(),
                    ..args.engine.options()
                },
                max_sessions: args.max_sessions,
                parallel: args.parallel,
                max_queue: args.max_queue,
                prefix_cache: (!args.no_cache).then(PrefixCacheConfig::default),
                // The default deadline is sized from it.
                measure_speed: args.timeout_s.is_none(),
            };
            embedded_entries(&declared(&args)?, &base)?
        }
    };
    let config = ServerConfig {
        host: args.host,
        port: args.port,
        api_key: args
            .api_key
            .or_else(|| std::env::var("TOOLGRAM_API_KEY").ok()),
        max_body_bytes: args.max_body_bytes,
        max_connections: args.max_connections,
        header_read_timeout: Duration::from_secs(args.header_read_timeout_s),
        body_read_timeout: Duration::from_secs(args.body_read_timeout_s),
        write_timeout: Duration::from_secs(args.write_timeout_s),
        max_votes: args.max_votes,
        drain_timeout: Duration::from_secs(args.drain_timeout_s),
        max_stored_bytes: args.max_stored_bytes,
        max_tokens: args.max_tokens.map_or(0, |n| n.max(1)),
        timeout: args.timeout_s.map_or(Timeout::Sized, |s| {
            Timeout::Fixed(Duration::from_secs(s.max(1)))
        }),
        max_calls_per_reply: (args.max_calls_per_reply > 0).then_some(args.max_calls_per_reply),
        plan: args.levers.plan(),
        call_bias: args.levers.call_bias,
        count_bias: args.levers.count_bias,
        votes: args.levers.votes,
        repeats: args.repeats,
        stop_repeated_text: args.levers.repeated_text.stops(),
        strict_schemas: args.strict_schemas,
        strict_model_names: args.strict_model_names,
        hosted_tools: args.hosted_tools,
        max_steps: args.max_steps,
        ..ServerConfig::default()
    };
    // Settings the server cannot start with stop it before the model loads.
    config.check()?;
    let mut entries = entries;
    add_aliases(&mut entries, &args.model_alias)?;
    if !(args.min_residency_s.is_finite() && args.min_residency_s >= 0.0) {
        anyhow::bail!("--min-residency-s must be a number of seconds, 0 or more");
    }
    let residency = Residency {
        max_loaded: Some(args.max_loaded),
        min_residency: Duration::from_secs_f64(args.min_residency_s.min(86_400.0)),
    };
    // A server that cannot start stops the server before the model loads.
    let mcp = if args.mcp.is_empty() {
        None
    } else {
        eprintln!("toolgram serve: starting {} MCP server(s)…", args.mcp.len());
        let timeout = Duration::from_secs(args.mcp_timeout_s);
        let sources = ToolSources::start(&args.mcp, timeout).map_err(RunError::from)?;
        let tools = sources.tools().map_err(RunError::from)?;
        for (name, _) in &args.mcp {
            let names: Vec<&str> = tools
                .iter()
                .filter(|t| t.server == *name)
                .map(|t| t.tool.name.as_str())
                .collect();
            eprintln!("toolgram serve: MCP server `{name}`: {}", names.join(", "));
        }
        Some(sources)
    };
    let models = ModelSet::new(entries, residency)?;
    models.load_default()?;
    toolgram_server::serve_blocking(models, config, mcp)?;
    Ok(())
}

/// The models `--model` and `--models` declare (the default model when neither does); a
/// provider serves one.
fn declared(args: &ServeArgs) -> anyhow::Result<Vec<ModelDecl>> {
    let provider = args.provider.provider.as_deref();
    if provider.is_some_and(|p| p != "embedded") && (args.model.len() > 1 || args.models.is_some())
    {
        anyhow::bail!(
            "--provider serves one model: give one --model (several models, or --models, are for the embedded engine)"
        );
    }
    let mut decls: Vec<ModelDecl> = args.model.iter().map(|m| ModelDecl::reference(m)).collect();
    if let Some(file) = &args.models {
        decls.extend(read_models_file(file, args.models_outside_folder)?);
    }
    if decls.is_empty() {
        decls.push(ModelDecl::reference("default"));
    }
    Ok(decls)
}
