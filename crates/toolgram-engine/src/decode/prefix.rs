//! Evaluated prompt prefixes kept outside the session: the [`PrefixStore`] trait a caller
//! (the run stage's disk cache) implements, and the session's side of it — where the reusable
//! prefix of a prompt ends, loading a stored KV state into a session's sequence (cut to the
//! tokens it shares with the prompt), and saving one.
//!
//! A stored state is used up to its longest common prefix with the prompt: a state whose
//! later tokens differ (a prompt that changed one line in the middle) gives the tokens before
//! the change, its KV cut there. It is only used when llama.cpp loads it AND the tokens it
//! holds are the ones the store named; anything else is handed back to the store to drop, and
//! the prompt is evaluated as if nothing was stored. This module must not decide where or how
//! long states are kept (the store does), and must not decode past the prefix.

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::token::LlamaToken;
use std::path::{Path, PathBuf};
use toolgram_core::ChatMessage;

/// A stored state that shares a prefix with a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// Tokens the state holds.
    pub holds: usize,
    /// Of them, the first ones the prompt shares.
    pub shares: usize,
    /// A file llama.cpp can load.
    pub path: PathBuf,
}

/// Where evaluated prefixes are kept between sessions and processes.
pub trait PrefixStore: Send + Sync {
    /// The stored state sharing the longest prefix with `tokens` (token ids). The store
    /// checks its own files (size, checksum) before answering.
    fn find(&self, tokens: &[i32]) -> Option<Stored>;
    /// A fresh temporary path to save the state of `tokens` into; `None` to not store it.
    fn begin(&self, tokens: &[i32]) -> Option<PathBuf>;
    /// The state of `tokens` is in `temp`: keep it.
    fn commit(&self, tokens: &[i32], temp: &Path);
    /// The file at `path` could not be used (`why`): drop it.
    fn reject(&self, path: &Path, why: &str);
}

/// Token ids as the store sees them.
pub(crate) fn ids(tokens: &[LlamaToken]) -> Vec<i32> {
    tokens.iter().map(|t| t.0).collect()
}

/// `messages` with the last one's text replaced by a marker: rendered, the prompt diverges
/// from the real one where the last message begins, which is where the reusable prefix ends.
pub(crate) fn with_last_replaced(messages: &[ChatMessage]) -> Option<Vec<ChatMessage>> {
    let mut out = messages.to_vec();
    let last = out.last_mut()?;
    let text = last.content.as_deref().unwrap_or_default();
    last.content = Some(if text == "\u{1}" { "\u{2}" } else { "\u{1}" }.to_owned());
    Some(out)
}

/// Length of the longest common prefix.
pub(crate) fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// What [`load`] did to the context.
pub(crate) enum Loaded {
    /// Nothing longer was stored: the context is as it was.
    Nothing,
    /// The context now holds exactly these tokens.
    Tokens(Vec<LlamaToken>),
    /// A stored state could not be used: the context was emptied.
    Cleared,
}

/// Load the stored state sharing the longest prefix with `tokens[..keep]` into sequence
/// `seq`, cut to the tokens it shares, when they are more than the `common` tokens the
/// sequence already holds.
pub(crate) fn load(
    ctx: &mut LlamaContext<'_>,
    seq: u32,
    store: &dyn PrefixStore,
    tokens: &[LlamaToken],
    keep: usize,
    common: usize,
) -> Loaded {
    let Some(Stored {
        holds,
        shares,
        path,
    }) = store.find(&ids(&tokens[..keep]))
    else {
        return Loaded::Nothing;
    };
    if shares <= common || shares > keep || shares > holds {
        return Loaded::Nothing;
    }
    let _ = ctx.clear_kv_cache_seq(Some(seq), None, None);
    let why = match ctx.state_seq_load_file(&path, seq as i32, holds) {
        Ok((loaded, _)) if loaded.len() == holds && loaded[..shares] == tokens[..shares] => {
            let cut = u32::try_from(shares).ok();
            if shares == holds
                || ctx
                    .clear_kv_cache_seq(Some(seq), cut, None)
                    .unwrap_or(false)
            {
                return Loaded::Tokens(loaded[..shares].to_vec());
            }
            // The state is sound; this context cannot cut it (a recurrent model's memory).
            let _ = ctx.clear_kv_cache_seq(Some(seq), None, None);
            return Loaded::Cleared;
        }
        Ok(_) => "the tokens it holds differ from its name".to_owned(),
        Err(e) => format!("llama.cpp could not load it: {e}"),
    };
    let _ = ctx.clear_kv_cache_seq(Some(seq), None, None);
    store.reject(&path, &why);
    Loaded::Cleared
}

/// Save the KV state of sequence `seq`, which holds exactly `cached` (the prefix to keep).
/// Not kept when a worker holding some of it was lost while it was read (the relay's
/// stand-in zeros would be stored as the prefix).
pub(crate) fn save(
    ctx: &LlamaContext<'_>,
    seq: u32,
    store: &dyn PrefixStore,
    cached: &[LlamaToken],
    workers: &crate::rpc::Workers,
) {
    let tokens = ids(cached);
    let Some(temp) = store.begin(&tokens) else {
        return;
    };
    match ctx.state_seq_save_file(&temp, seq as i32, cached) {
        Ok(_) if workers.check().is_ok() => store.commit(&tokens, &temp),
        Ok(_) => {
            let _ = std::fs::remove_file(&temp);
            tracing::warn!("a worker was lost while the prompt prefix was read: not saved");
        }
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            tracing::warn!(error = %e, "could not save the prompt prefix");
        }
    }
}
