//! Sessions that outlive a request: which lane of the batched context a request runs on,
//! chosen by the exact inputs that render the prompt's prefix (system messages, tools,
//! prompt-mode instructions), so a request with the same tools evaluates only its new turn;
//! otherwise the least recently used free lane. A lane holding another prefix is still
//! correct to use: the session reuses only the tokens its prompt shares. This module must not
//! decode.

use crate::request::Request;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use toolgram_core::define::request::Mode;

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
    if req.shape.mode == Mode::Prompt || req.few_shot {
        // Prompt mode (or few-shot) writes the choice's instructions into the system prompt.
        format!("{:?}", req.shape.choice).hash(&mut h);
        req.shape.parallel.hash(&mut h);
    }
    h.finish()
}

/// What the dispatcher knows of one lane: the prefix it holds, when it was last used, and
/// whether a request runs on it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Slot {
    pub key: Option<u64>,
    pub used: u64,
    pub busy: bool,
}

/// The lanes of one batched context and the prefixes they hold.
pub(crate) struct Slots {
    slots: Vec<Slot>,
    tick: u64,
    stats: Arc<CacheStats>,
}

impl Slots {
    pub(crate) fn new(lanes: usize, stats: Arc<CacheStats>) -> Self {
        Self {
            slots: vec![Slot::default(); lanes.max(1)],
            tick: 0,
            stats,
        }
    }

    /// Requests running now.
    pub(crate) fn running(&self) -> usize {
        self.slots.iter().filter(|s| s.busy).count()
    }

    /// The lane a request with prefix `key` runs on, marked busy: a free lane that holds the
    /// prefix (a hit), else the free lane least recently used (a miss); `None` when every
    /// lane is busy.
    pub(crate) fn take(&mut self, key: u64) -> Option<usize> {
        self.tick += 1;
        let free = || self.slots.iter().enumerate().filter(|(_, s)| !s.busy);
        let (i, hit) = match free().find(|(_, s)| s.key == Some(key)) {
            Some((i, _)) => (i, true),
            None => (free().min_by_key(|(_, s)| s.used)?.0, false),
        };
        let counter = if hit {
            &self.stats.hits
        } else {
            &self.stats.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let slot = &mut self.slots[i];
        slot.key = Some(key);
        slot.used = self.tick;
        slot.busy = true;
        Some(i)
    }

    /// The request on lane `i` has finished.
    pub(crate) fn release(&mut self, i: usize) {
        if let Some(s) = self.slots.get_mut(i) {
            s.busy = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_to_the_lane_holding_its_prefix_else_the_least_recently_used() {
        let stats = Arc::new(CacheStats::default());
        let mut slots = Slots::new(2, Arc::clone(&stats));
        assert_eq!(slots.take(7), Some(0));
        assert_eq!(slots.take(8), Some(1));
        assert_eq!(slots.take(9), None, "both lanes busy");
        slots.release(0);
        slots.release(1);
        assert_eq!(slots.take(8), Some(1), "lane 1 holds prefix 8");
        assert_eq!(slots.take(9), Some(0), "the only free lane");
        slots.release(1);
        slots.release(0);
        // Lane 1 was used before lane 0: prefix 10 evicts it.
        assert_eq!(slots.take(10), Some(1));
        assert_eq!(slots.running(), 1);
        assert_eq!((stats.hits(), stats.misses()), (1, 4));
    }

    #[test]
    fn prompt_mode_s_instructions_are_part_of_the_prefix_key() {
        let tools = toolgram_core::ToolSet::from_json_str("[]").expect("an empty pool");
        let plain = Request::new(Vec::new(), tools);
        let mut shown = plain.clone();
        shown.few_shot = true;
        assert_ne!(prefix_key(&plain), prefix_key(&shown));
        let mut prompted = plain.clone();
        prompted.shape.mode = Mode::Prompt;
        assert_ne!(prefix_key(&plain), prefix_key(&prompted));
        // The instructions follow the tool choice.
        let mut required = shown.clone();
        required.shape.choice = toolgram_core::ToolChoice::Required;
        assert_ne!(prefix_key(&shown), prefix_key(&required));
    }
}
