//! Sessions that outlive a request: a small LRU of llama.cpp contexts keyed by the exact
//! inputs that render the prompt's prefix (system messages, tools, prompt-mode
//! instructions), so a request with the same tools evaluates only its new turn, and a
//! request whose prefix differs by one byte never reuses another's KV state. Every session
//! it opens also reads and writes the disk prefix store when there is one. This module must
//! not decode.

use crate::request::Request;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use toolgram_core::define::request::Mode;
use toolgram_engine::{Engine, EngineError, PrefixStore, Session};

/// Hits and misses of the session cache, readable from any thread.
#[derive(Debug, Default)]
pub struct CacheStats {
    hits: AtomicU64,
    misses: AtomicU64,
}

impl CacheStats {
    /// Requests that found a session holding their prefix.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Requests that had to evaluate their prefix.
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
}

/// The key of the prefix a request renders before its first non-system message.
pub(crate) fn prefix_key(req: &Request) -> u64 {
    let mut h = DefaultHasher::new();
    for m in req.messages.iter().take_while(|m| m.role == "system") {
        m.content.hash(&mut h);
    }
    // The template renders the tools' definitions; their Debug form holds all of them.
    format!("{:?}", req.tools.tools()).hash(&mut h);
    req.response_format.is_some().hash(&mut h);
    if req.mode == Mode::Prompt {
        // Prompt mode writes the choice's instructions into the system prompt.
        format!("{:?}", req.tool_choice).hash(&mut h);
        req.parallel_tool_calls.hash(&mut h);
    }
    h.finish()
}

struct Slot<'e> {
    key: u64,
    used: u64,
    session: Session<'e>,
}

/// At most `capacity` sessions over one engine.
pub(crate) struct SessionCache<'e> {
    engine: &'e Engine,
    slots: Vec<Slot<'e>>,
    capacity: usize,
    tick: u64,
    stats: Arc<CacheStats>,
    store: Option<Arc<dyn PrefixStore>>,
}

impl<'e> SessionCache<'e> {
    pub(crate) fn new(
        engine: &'e Engine,
        capacity: usize,
        stats: Arc<CacheStats>,
        store: Option<Arc<dyn PrefixStore>>,
    ) -> Self {
        Self {
            engine,
            slots: Vec::new(),
            capacity: capacity.max(1),
            tick: 0,
            stats,
            store,
        }
    }

    /// The session for prefix `key`: the one that holds it, a new one, or the least recently
    /// used one emptied.
    pub(crate) fn session(&mut self, key: u64) -> Result<&mut Session<'e>, EngineError> {
        self.tick += 1;
        let i = match self.slots.iter().position(|s| s.key == key) {
            Some(i) => {
                self.stats.hits.fetch_add(1, Ordering::Relaxed);
                i
            }
            None => {
                self.stats.misses.fetch_add(1, Ordering::Relaxed);
                self.take_slot(key)?
            }
        };
        let slot = &mut self.slots[i];
        slot.used = self.tick;
        Ok(&mut slot.session)
    }

    fn take_slot(&mut self, key: u64) -> Result<usize, EngineError> {
        if self.slots.len() < self.capacity {
            let mut session = self.engine.session()?;
            session.set_prefix_store(self.store.clone());
            self.slots.push(Slot {
                key,
                used: 0,
                session,
            });
            return Ok(self.slots.len() - 1);
        }
        let lru = self
            .slots
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| s.used)
            .map_or(0, |(i, _)| i);
        let slot = &mut self.slots[lru];
        slot.key = key;
        slot.session.clear_cache();
        Ok(lru)
    }
}
