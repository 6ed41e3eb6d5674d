//! `toolgram serve`: the OpenAI-compatible server (`toolgram-server`) on the embedded model
//! (fetched on first use) or a configured provider. Argument parsing only.

use crate::provider::ProviderArgs;
use clap::Args;
use std::time::Duration;
use toolgram_engine::EngineOptions;
use toolgram_runtime::prefix_cache::PrefixCacheConfig;
use toolgram_runtime::{Backend, EmbeddedConfig, Runtime};
use toolgram_server::ServerConfig;

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0: any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Registry model name or role, or a GGUF path (default: the default model); with
    /// --provider, the provider's model id.
    #[arg(long)]
    pub model: Option<String>,
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
    /// Longest a request may run, in seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout_s: u64,
    /// Tokens a reply may have: the default for requests that name none and the most one
    /// may ask for (more is a 400).
    #[arg(long, default_value_t = 2048)]
    pub max_tokens: usize,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_body_bytes: usize,
    /// CPU threads.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Context window in tokens.
    #[arg(long)]
    pub ctx_size: Option<u32>,
    /// A remote provider behind the server (a gateway adding grammar, validation, retries).
    #[command(flatten)]
    pub provider: ProviderArgs,
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    let backend = match args.provider.resolve(args.model.as_deref())? {
        Some(p) => Backend::Provider(p),
        None => Backend::Embedded(EmbeddedConfig {
            model: args.model.clone(),
            engine: EngineOptions {
                threads: args.threads,
                n_ctx: args.ctx_size,
                ..EngineOptions::default()
            },
            max_sessions: args.max_sessions,
            parallel: args.parallel,
            max_queue: args.max_queue,
            prefix_cache: (!args.no_cache).then(PrefixCacheConfig::default),
        }),
    };
    let runtime = Runtime::new(backend)?;
    let config = ServerConfig {
        host: args.host,
        port: args.port,
        api_key: args
            .api_key
            .or_else(|| std::env::var("TOOLGRAM_API_KEY").ok()),
        max_body_bytes: args.max_body_bytes,
        max_tokens: args.max_tokens.max(1),
        timeout: Duration::from_secs(args.timeout_s.max(1)),
        ..ServerConfig::default()
    };
    toolgram_server::serve_blocking(runtime, config)?;
    Ok(())
}
