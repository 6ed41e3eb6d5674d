//! `toolgram cache list | clear`: the prompt-prefix cache on disk (evaluated KV states of
//! tool blocks and conversations, reused by `call` and `serve`). Printing only: the runtime
//! owns the cache.

use crate::output::say;
use clap::Subcommand;
use serde_json::json;
use toolgram_runtime::prefix_cache;

#[derive(Subcommand)]
pub(crate) enum CacheCommand {
    /// One JSON line per stored prefix: model folder, tokens, bytes, file.
    List,
    /// Remove every stored prefix.
    Clear,
}

pub(crate) fn run(cmd: CacheCommand) -> anyhow::Result<()> {
    let dir = prefix_cache::default_dir();
    match cmd {
        CacheCommand::List => {
            for e in prefix_cache::list(&dir) {
                say!("{}", serde_json::to_string(&e)?)?;
            }
        }
        CacheCommand::Clear => {
            let removed = prefix_cache::clear(&dir)?;
            say!("{}", json!({"removed": removed, "dir": dir}))?;
        }
    }
    Ok(())
}
