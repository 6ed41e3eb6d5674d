//! [`ModelSet`]: several models behind one front end, each picked by name, loaded on first
//! use and unloaded, least recently used first, past a bound.
//!
//! Each model is its own [`Runtime`] (its own call syntax, grammar cache, sessions, disk
//! prefix cache and lanes); this module only decides which are loaded. Loads are one at a
//! time, in arrival order (a fair queue: two models loading at once on the same cores are
//! not faster, and a bound on what is loaded must count them), each within its request's
//! deadline: a request whose time runs out leaves the queue with a typed error. A request for
//! a model that is loading waits for that load, counted against the model's queue as a queued
//! request is ([`RunError::Busy`] past it).
//!
//! A model unloaded for another is freed once the requests it is running end: the load that
//! unloaded it waits for them first, so two models past the bound are never in memory — but
//! never past its own deadline: then the model stays loaded, the load fails with
//! [`RunError::ModelSwap`], and nothing was unloaded for nothing. A model is not unloaded
//! before it has been loaded for the set's minimum residency (the load waits for it), so no
//! client can force loads faster than one per residency.
//!
//! This module must not read requests or run them: it hands out runtimes.

use crate::{Backend, RunError, Runtime};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One model a [`ModelSet`] serves.
#[derive(Debug, Clone)]
pub struct ModelEntry {
    /// The id `/v1/models` lists and replies name.
    pub id: String,
    /// Other names that pick it (aliases, the reference it was given as).
    pub aliases: Vec<String>,
    /// What it runs on.
    pub backend: Backend,
}

impl ModelEntry {
    /// The model `id` on `backend`, with no other name.
    pub fn new(id: impl Into<String>, backend: Backend) -> Self {
        Self {
            id: id.into(),
            aliases: Vec::new(),
            backend,
        }
    }

    /// A provider's entry, named by the model id it was given (a `.gguf` file name without
    /// its extension; `toolgram` when none).
    pub fn provider(config: crate::ProviderConfig) -> Self {
        let id = config.provider.model.clone().unwrap_or_default();
        let id = match id.strip_suffix(".gguf") {
            Some(stem) => stem.to_owned(),
            None if id.is_empty() => "toolgram".to_owned(),
            None => id,
        };
        Self::new(id, Backend::Provider(config))
    }
}

/// A set of models that cannot be served together.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelSetError {
    /// No model at all.
    #[error("no model to serve")]
    Empty,
    /// One name picks two models.
    #[error(
        "the name `{name}` is given to two models, `{first}` and `{second}`: give each its own"
    )]
    NameClash {
        /// The name.
        name: String,
        /// The first model with it.
        first: String,
        /// The second.
        second: String,
    },
    /// A bound of zero loaded models.
    #[error("--max-loaded must be at least 1")]
    ZeroLoaded,
}

/// How many models a [`ModelSet`] keeps loaded and for how long at least.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Residency {
    /// Models loaded at once (`None`: no bound).
    pub max_loaded: Option<usize>,
    /// How long a model stays loaded at least before it is unloaded for another.
    pub min_residency: Duration,
}

impl Default for Residency {
    fn default() -> Self {
        Self {
            max_loaded: Some(DEFAULT_MAX_LOADED),
            min_residency: DEFAULT_MIN_RESIDENCY,
        }
    }
}

/// What one model has done, for health and metrics.
#[derive(Clone)]
pub struct ModelState {
    /// Its id.
    pub id: String,
    /// Its runtime, when loaded.
    pub runtime: Option<Runtime>,
    /// Times it was loaded.
    pub loads: u64,
    /// Times it was unloaded for another.
    pub unloads: u64,
    /// How long its last load took.
    pub last_load: Option<Duration>,
    /// Requests waiting for it to load.
    pub waiting: usize,
}

#[derive(Default)]
struct Slot {
    runtime: Option<Runtime>,
    loads: u64,
    unloads: u64,
    last_load: Option<Duration>,
    /// When it was last loaded.
    loaded_at: Option<Instant>,
}

struct Entry {
    model: ModelEntry,
    slot: Mutex<Slot>,
    /// The set's clock when it was last handed out.
    last_used: AtomicU64,
    /// Requests waiting for its load.
    waiting: AtomicUsize,
    /// Requests that may wait for it (its queue's bound).
    max_waiting: usize,
}

/// Several models by name, loaded on demand (`Send + Sync`; share it in an `Arc`).
pub struct ModelSet {
    entries: Vec<Entry>,
    max_loaded: Option<usize>,
    min_residency: Duration,
    /// Loads take turns here, in arrival order (a model is unloaded for another in its turn).
    loads: LoadQueue,
    clock: AtomicU64,
}

/// Models a set keeps loaded at once unless told otherwise: Ollama's default on a machine
/// without a GPU. Any client can name any declared model, so without a bound any client
/// could load every one.
pub const DEFAULT_MAX_LOADED: usize = 3;

/// How long a model stays loaded at least before it is unloaded for another, unless told
/// otherwise: a load of a small model takes a second or two on 2 cores, so requests that
/// alternate between models spend at most a fraction of their time loading.
pub const DEFAULT_MIN_RESIDENCY: Duration = Duration::from_secs(10);

/// Turns at loading, in arrival order; a waiter whose deadline passes leaves its place.
#[derive(Default)]
struct LoadQueue {
    state: Mutex<QueueState>,
    changed: Condvar,
}

#[derive(Default)]
struct QueueState {
    next: u64,
    waiting: VecDeque<u64>,
    busy: bool,
}

/// A turn at loading, given back when dropped.
struct Turn<'q>(&'q LoadQueue);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        lock(&self.0.state).busy = false;
        self.0.changed.notify_all();
    }
}

impl LoadQueue {
    /// Wait for this caller's turn, or `None` once `deadline` passes (its place given up).
    fn turn(&self, deadline: Instant) -> Option<Turn<'_>> {
        let mut st = lock(&self.state);
        let me = st.next;
        st.next += 1;
        st.waiting.push_back(me);
        loop {
            if !st.busy && st.waiting.front() == Some(&me) {
                st.waiting.pop_front();
                st.busy = true;
                return Some(Turn(self));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                st.waiting.retain(|&w| w != me);
                drop(st);
                self.changed.notify_all();
                return None;
            }
            st = self
                .changed
                .wait_timeout(st, left)
                .map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
    }
}

/// How often an unload checks whether the requests its model runs have ended.
const UNLOAD_POLL: Duration = Duration::from_millis(20);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ModelSet {
    /// The set of `models` (the first is the default), kept loaded as `residency` says.
    /// Nothing is loaded yet: see [`ModelSet::load_default`].
    pub fn new(models: Vec<ModelEntry>, residency: Residency) -> Result<Self, ModelSetError> {
        let Residency {
            max_loaded,
            min_residency,
        } = residency;
        if models.is_empty() {
            return Err(ModelSetError::Empty);
        }
        if max_loaded == Some(0) {
            return Err(ModelSetError::ZeroLoaded);
        }
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for m in &models {
            let names = std::iter::once(m.id.as_str()).chain(m.aliases.iter().map(String::as_str));
            for name in names {
                match seen.iter().find(|(n, _)| *n == name) {
                    Some((_, first)) if *first != m.id => {
                        return Err(ModelSetError::NameClash {
                            name: name.to_owned(),
                            first: (*first).to_owned(),
                            second: m.id.clone(),
                        });
                    }
                    Some(_) => {}
                    None => seen.push((name, &m.id)),
                }
            }
        }
        let entries = models
            .into_iter()
            .map(|model| {
                let max_waiting = match &model.backend {
                    Backend::Embedded(c) => c.max_queue.max(1),
                    Backend::Provider(_) => usize::MAX,
                };
                Entry {
                    model,
                    slot: Mutex::new(Slot::default()),
                    last_used: AtomicU64::new(0),
                    waiting: AtomicUsize::new(0),
                    max_waiting,
                }
            })
            .collect();
        Ok(Self {
            entries,
            max_loaded,
            min_residency,
            loads: LoadQueue::default(),
            clock: AtomicU64::new(1),
        })
    }

    /// The models, the default first.
    pub fn models(&self) -> impl Iterator<Item = &ModelEntry> {
        self.entries.iter().map(|e| &e.model)
    }

    /// The index of the model `name` picks: its id or one of its aliases.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.model.id == name || e.model.aliases.iter().any(|a| a == name))
    }

    /// The model at `index`, loaded now if it is not (blocking: a load takes seconds), the
    /// least recently used unloaded first past the bound; with no deadline.
    pub fn get(&self, index: usize) -> Result<Runtime, RunError> {
        self.get_within(index, Instant::now() + Duration::from_secs(365 * 24 * 3600))
    }

    /// [`ModelSet::get`] within `deadline`: a load that cannot start by then (its turn, a
    /// model's residency, the requests a model to unload runs) fails with
    /// [`RunError::ModelSwap`] and changes nothing.
    pub fn get_within(&self, index: usize, deadline: Instant) -> Result<Runtime, RunError> {
        let entry = self.entry(index)?;
        if let Some(rt) = self.loaded_touched(entry) {
            return Ok(rt);
        }
        if entry.waiting.fetch_add(1, Ordering::AcqRel) >= entry.max_waiting {
            entry.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(RunError::Busy {
                queued: entry.max_waiting,
            });
        }
        let loaded = self.load(index, entry, deadline);
        entry.waiting.fetch_sub(1, Ordering::AcqRel);
        loaded
    }

    /// Whether the model at `index` runs on the embedded engine (its requests can be checked
    /// against the engine's rules before it is loaded).
    pub fn is_embedded(&self, index: usize) -> bool {
        self.entries
            .get(index)
            .is_some_and(|e| matches!(e.model.backend, Backend::Embedded(_)))
    }

    /// Load the default model (at start, so a model that cannot load stops the server before
    /// it listens).
    pub fn load_default(&self) -> Result<Runtime, RunError> {
        self.get(0)
    }

    /// The model at `index` if loaded, without loading it or counting a use.
    pub fn loaded(&self, index: usize) -> Option<Runtime> {
        let entry = self.entries.get(index)?;
        lock(&entry.slot).runtime.clone()
    }

    /// Every model's state, the default first.
    pub fn states(&self) -> Vec<ModelState> {
        self.entries
            .iter()
            .map(|e| {
                let slot = lock(&e.slot);
                ModelState {
                    id: e.model.id.clone(),
                    runtime: slot.runtime.clone(),
                    loads: slot.loads,
                    unloads: slot.unloads,
                    last_load: slot.last_load,
                    waiting: e.waiting.load(Ordering::Acquire),
                }
            })
            .collect()
    }

    fn entry(&self, index: usize) -> Result<&Entry, RunError> {
        self.entries
            .get(index)
            .ok_or_else(|| RunError::InvalidRequest(format!("no model number {index}")))
    }

    fn loaded_touched(&self, entry: &Entry) -> Option<Runtime> {
        let rt = lock(&entry.slot).runtime.clone()?;
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        entry.last_used.store(now, Ordering::Relaxed);
        Some(rt)
    }

    fn load(&self, index: usize, entry: &Entry, deadline: Instant) -> Result<Runtime, RunError> {
        let swap_error = |why: String| RunError::ModelSwap {
            model: entry.model.id.clone(),
            why,
        };
        let _turn = self
            .loads
            .turn(deadline)
            .ok_or_else(|| swap_error("other loads were ahead of it".into()))?;
        // Loaded by the request this one waited behind.
        if let Some(rt) = self.loaded_touched(entry) {
            return Ok(rt);
        }
        self.make_room(index, deadline).map_err(swap_error)?;
        tracing::info!(model = %entry.model.id, "loading");
        let started = Instant::now();
        let rt = Runtime::new(entry.model.backend.clone())?;
        let took = started.elapsed();
        tracing::info!(model = %entry.model.id, seconds = took.as_secs_f64(), "loaded");
        let mut slot = lock(&entry.slot);
        slot.runtime = Some(rt.clone());
        slot.loads += 1;
        slot.last_load = Some(took);
        slot.loaded_at = Some(Instant::now());
        drop(slot);
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        entry.last_used.store(now, Ordering::Relaxed);
        Ok(rt)
    }

    /// Unload the least recently used models until one more fits under the bound, each once
    /// it has been loaded for the minimum residency and the requests it runs have ended —
    /// within `deadline`, else the model stays loaded and the reason comes back.
    fn make_room(&self, loading: usize, deadline: Instant) -> Result<(), String> {
        let Some(max) = self.max_loaded else {
            return Ok(());
        };
        loop {
            let loaded: Vec<usize> = (0..self.entries.len())
                .filter(|&i| i != loading && lock(&self.entries[i].slot).runtime.is_some())
                .collect();
            if loaded.len() < max {
                return Ok(());
            }
            let Some(&oldest) = loaded
                .iter()
                .min_by_key(|&&i| self.entries[i].last_used.load(Ordering::Relaxed))
            else {
                return Ok(());
            };
            let entry = &self.entries[oldest];
            let id = &entry.model.id;
            let resident_until = lock(&entry.slot)
                .loaded_at
                .map(|at| at + self.min_residency);
            if let Some(until) = resident_until.filter(|u| *u > Instant::now()) {
                if until > deadline {
                    return Err(format!(
                        "`{id}` was loaded less than {} s ago (--min-residency-s) and --max-loaded {max} leaves no room before the request's deadline",
                        self.min_residency.as_secs_f64()
                    ));
                }
                std::thread::sleep(until.saturating_duration_since(Instant::now()));
                continue;
            }
            let Some(rt) = lock(&entry.slot).runtime.take() else {
                continue;
            };
            tracing::info!(model = %id, "unloading (least recently used)");
            // Requests running on it hold it: wait for them, so its memory is freed before
            // the next model takes its place — within the deadline, else it stays.
            while Arc::strong_count(&rt.inner) > 1 {
                if Instant::now() >= deadline {
                    let running = Arc::strong_count(&rt.inner) - 1;
                    lock(&entry.slot).runtime = Some(rt);
                    tracing::info!(model = %id, "kept loaded: its requests did not end in time");
                    return Err(format!(
                        "`{id}` is still running {running} request(s) and --max-loaded {max} leaves no room before the request's deadline"
                    ));
                }
                std::thread::sleep(UNLOAD_POLL);
            }
            lock(&entry.slot).unloads += 1;
            drop(rt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EmbeddedConfig;

    /// At most `n` loaded, no minimum residency.
    fn bound(n: usize) -> Residency {
        Residency {
            max_loaded: Some(n),
            min_residency: Duration::ZERO,
        }
    }

    fn unbounded() -> Residency {
        Residency {
            max_loaded: None,
            min_residency: Duration::ZERO,
        }
    }

    fn entry(id: &str, aliases: &[&str]) -> ModelEntry {
        ModelEntry {
            id: id.into(),
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
            backend: Backend::Embedded(EmbeddedConfig::default()),
        }
    }

    #[test]
    fn names_pick_one_model_each_and_a_clash_is_refused() {
        let set = ModelSet::new(vec![entry("a", &["fast"]), entry("b", &["big"])], bound(1))
            .expect("a set");
        assert_eq!(set.find("a"), Some(0));
        assert_eq!(set.find("big"), Some(1));
        assert_eq!(set.find("c"), None);
        let clash = ModelSet::new(vec![entry("a", &["x"]), entry("b", &["x"])], unbounded());
        assert_eq!(
            clash.err(),
            Some(ModelSetError::NameClash {
                name: "x".into(),
                first: "a".into(),
                second: "b".into()
            })
        );
        assert_eq!(
            ModelSet::new(vec![], unbounded()).err(),
            Some(ModelSetError::Empty)
        );
        assert_eq!(
            ModelSet::new(vec![entry("a", &[])], bound(0)).err(),
            Some(ModelSetError::ZeroLoaded)
        );
    }

    /// A model that loads at once: a provider runtime (nothing is contacted until a run).
    fn provider(id: &str) -> ModelEntry {
        use toolgram_providers::{Config, Overrides};
        let overrides = Overrides {
            base_url: Some("http://127.0.0.1:9".into()),
            model: Some(id.into()),
            ..Overrides::default()
        };
        let provider = Config::default()
            .resolve("llama-server", &overrides)
            .expect("resolves");
        ModelEntry::new(
            id,
            Backend::Provider(crate::ProviderConfig {
                provider,
                stream: false,
            }),
        )
    }

    #[test]
    fn past_the_bound_the_least_recently_used_model_is_unloaded() {
        let set = ModelSet::new(vec![provider("a"), provider("b"), provider("c")], bound(2))
            .expect("a set");
        set.get(0).expect("a");
        set.get(1).expect("b");
        set.get(0)
            .expect("a again: now b is the least recently used");
        set.get(2).expect("c");
        let loaded: Vec<bool> = set.states().iter().map(|s| s.runtime.is_some()).collect();
        assert_eq!(loaded, [true, false, true], "b unloaded, not a");
        let held = set.get(0).expect("a, held by a request in flight");
        set.get(1).expect("b again: c is the least recently used");
        let states = set.states();
        let loaded: Vec<bool> = states.iter().map(|s| s.runtime.is_some()).collect();
        assert_eq!(loaded, [true, true, false]);
        let counts: Vec<(u64, u64)> = states.iter().map(|s| (s.loads, s.unloads)).collect();
        assert_eq!(counts, [(1, 0), (2, 1), (1, 1)]);
        drop(held);
    }

    #[test]
    fn a_model_that_cannot_load_says_why_and_stays_unloaded() {
        let mut bad = entry("missing", &[]);
        bad.backend = Backend::Embedded(EmbeddedConfig {
            model: Some("/no/such/model.gguf".into()),
            ..EmbeddedConfig::default()
        });
        let set = ModelSet::new(vec![bad], unbounded()).expect("a set");
        assert!(set.get(0).is_err());
        let state = &set.states()[0];
        assert!(state.runtime.is_none());
        assert_eq!((state.loads, state.waiting), (0, 0));
    }

    #[test]
    fn a_model_whose_requests_outlast_the_deadline_stays_loaded_and_the_load_fails_typed() {
        let set = ModelSet::new(vec![provider("a"), provider("b")], bound(1)).expect("a set");
        let held = set.get(0).expect("a, held by a request in flight");
        let started = Instant::now();
        let refused = set.get_within(1, Instant::now() + Duration::from_millis(300));
        let took = started.elapsed();
        let e = refused.err().expect("b cannot load while a runs");
        assert_eq!(e.kind(), "model_swap", "{e}");
        assert!(
            e.to_string().contains("`a` is still running 1 request"),
            "{e}"
        );
        assert!(
            took < Duration::from_secs(2),
            "bounded by the deadline: {took:?}"
        );
        let states = set.states();
        let loaded: Vec<bool> = states.iter().map(|s| s.runtime.is_some()).collect();
        assert_eq!(loaded, [true, false], "a kept, b not loaded");
        assert_eq!((states[0].unloads, states[1].loads), (0, 0));
        drop((states, held));
        set.get_within(1, Instant::now() + Duration::from_secs(5))
            .expect("b once a is free");
        assert_eq!(set.states()[0].unloads, 1);
    }

    #[test]
    fn a_model_is_not_unloaded_before_its_minimum_residency() {
        let residency = Residency {
            max_loaded: Some(1),
            min_residency: Duration::from_millis(400),
        };
        let set = ModelSet::new(vec![provider("a"), provider("b")], residency).expect("a set");
        set.get(0).expect("a");
        let soon = set.get_within(1, Instant::now() + Duration::from_millis(100));
        let e = soon.err().expect("a was loaded too recently");
        assert!(e.to_string().contains("--min-residency-s"), "{e}");
        assert!(set.states()[0].runtime.is_some(), "a kept");
        let started = Instant::now();
        set.get_within(1, Instant::now() + Duration::from_secs(5))
            .expect("b, once a has been loaded long enough");
        assert!(started.elapsed() >= Duration::from_millis(200), "it waited");
    }

    #[test]
    fn loads_take_turns_in_arrival_order_and_a_waiter_past_its_deadline_leaves() {
        let queue = Arc::new(LoadQueue::default());
        let first = queue
            .turn(Instant::now() + Duration::from_secs(1))
            .expect("free");
        let order = Arc::new(Mutex::new(Vec::new()));
        let late = queue.turn(Instant::now() + Duration::from_millis(50));
        assert!(late.is_none(), "gave up its place");
        let waiters: Vec<_> = (0..3)
            .map(|i| {
                let (queue, order) = (Arc::clone(&queue), Arc::clone(&order));
                std::thread::sleep(Duration::from_millis(30));
                std::thread::spawn(move || {
                    let _turn = queue
                        .turn(Instant::now() + Duration::from_secs(5))
                        .expect("a turn");
                    lock(&order).push(i);
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        drop(first);
        for w in waiters {
            w.join().expect("joins");
        }
        assert_eq!(*lock(&order), [0, 1, 2]);
    }
}
