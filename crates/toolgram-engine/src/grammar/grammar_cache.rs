//! Compiled grammars kept between requests: llguidance builds a parser (lexer, grammar
//! tables) for each grammar text, which costs milliseconds to tens of milliseconds for a large
//! tool pool; an agent sends the same pool, choice and mode every turn. The cache keeps a fresh
//! matcher per exact grammar text (the text already spells the pool, `tool_choice`, parallel
//! calls, mode, syntax and think block; the tokenizer is the engine's own) and hands out deep
//! clones, least recently used out first. This module must not compile tools into grammars
//! (core does) or run a matcher.

use llguidance::Matcher;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Grammars kept per engine.
const CAPACITY: usize = 32;

struct Slot {
    lark: String,
    fresh: Matcher,
    used: u64,
}

/// Fresh matchers by grammar text.
#[derive(Default)]
pub(crate) struct GrammarCache {
    slots: Mutex<(Vec<Slot>, u64)>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl GrammarCache {
    /// A matcher for `lark` in its start state: a clone of the cached one, or `build`'s,
    /// kept for next time.
    pub(crate) fn get<E>(
        &self,
        lark: &str,
        build: impl FnOnce() -> Result<Matcher, E>,
    ) -> Result<Matcher, E> {
        if let Ok(mut guard) = self.slots.lock() {
            let (slots, tick) = &mut *guard;
            *tick += 1;
            if let Some(slot) = slots.iter_mut().find(|s| s.lark == lark) {
                slot.used = *tick;
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(slot.fresh.deep_clone());
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let fresh = build()?;
        let out = fresh.deep_clone();
        if let Ok(mut guard) = self.slots.lock() {
            let (slots, tick) = &mut *guard;
            if slots.len() >= CAPACITY
                && let Some(lru) = slots
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, s)| s.used)
                    .map(|(i, _)| i)
            {
                slots.swap_remove(lru);
            }
            slots.push(Slot {
                lark: lark.to_owned(),
                fresh,
                used: *tick,
            });
        }
        Ok(out)
    }

    /// (hits, misses) so far.
    pub(crate) fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}
