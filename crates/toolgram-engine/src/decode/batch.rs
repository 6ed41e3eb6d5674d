//! Continuous batching: one llama.cpp context whose KV cache holds several sequences (lanes),
//! each driven by its own session (`crate::Session`) on its own thread. A session hands the batch its next
//! tokens and waits; once no other lane is still choosing its next token (or one waited
//! [`STRAGGLER_WAIT`]), the session holding the lock decodes every pending lane in one
//! `llama_decode` — generation steps first, prompt chunks after, up to [`BATCH`] tokens — and
//! hands each lane its logits. A lane that stops generating is no longer waited for, so a
//! finished request frees its place in the next step at once and a new one joins it.
//!
//! Masks, sampling and grammar state stay on each session's thread, so they run between
//! decodes in parallel; buffers (token lists, logits) are allocated when a lane is opened and
//! reused. A lane's logits are read from llama.cpp only when its session asks for them
//! ([`LaneHandle::take_logits`]), or before the next decode: on a GPU backend `llama_decode`
//! returns before the forward pass ends and reading logits waits for it, so a session
//! computes its next mask in between. This module must not sample, match grammars or know
//! what a prompt is.

use crate::engine::Engine;
use crate::error::EngineError;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Most tokens in one `llama_decode` (and in one prompt chunk a lane submits).
pub(crate) const BATCH: usize = 512;

/// How long a lane with tokens pending waits for lanes still choosing theirs before it
/// decodes without them.
const STRAGGLER_WAIT: Duration = Duration::from_millis(25);

/// Steps of this many tokens or fewer (a sampled token and the tokens forced after it) go
/// into a decode before prompt chunks.
const STEP_TOKENS: usize = 128;

/// One llama.cpp context shared by up to `lanes` sessions decoding at once.
pub struct Batch<'e> {
    engine: &'e Engine,
    shared: Mutex<Shared<'e>>,
    decoded: Condvar,
}

struct Shared<'e> {
    ctx: LlamaContext<'e>,
    batch: LlamaBatch<'static>,
    lanes: Vec<Lane>,
    stats: BatchStats,
}

/// What a batch has decoded so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// `llama_decode` calls.
    pub decodes: u64,
    /// Lane submissions decoded (a lane's step or prompt chunk); above `decodes` when lanes
    /// shared decodes.
    pub lane_steps: u64,
    /// Tokens decoded.
    pub tokens: u64,
    /// Time inside `llama_decode`, µs.
    pub decode_us: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not generating: nobody waits for this lane.
    Idle,
    /// Decoded; its session is choosing the next tokens.
    Choosing,
    /// Tokens handed in, waiting for a decode.
    Pending,
}

struct Lane {
    open: bool,
    phase: Phase,
    tokens: Vec<LlamaToken>,
    start: usize,
    want_logits: bool,
    /// Index of the lane's last token in the batch being decoded.
    index: i32,
    in_batch: bool,
    logits: Vec<f32>,
    /// Decoded with `want_logits`, and its row not yet copied into `logits`.
    unread: bool,
    outcome: Option<Result<(), String>>,
}

impl Lane {
    fn new() -> Self {
        Self {
            open: false,
            phase: Phase::Idle,
            tokens: Vec::new(),
            start: 0,
            want_logits: false,
            index: 0,
            in_batch: false,
            logits: Vec::new(),
            unread: false,
            outcome: None,
        }
    }
}

impl Engine {
    /// One context for up to `lanes` sessions decoding at once, each lane with the engine's
    /// whole context window (the KV cache is `lanes` × `n_ctx` cells, one stream per lane:
    /// a lane's greedy reply is the one it gets alone, which a unified buffer does not keep —
    /// see docs/benchmarks.md, "Concurrent clients").
    pub fn batch(&self, lanes: usize) -> Result<Arc<Batch<'_>>, EngineError> {
        let lanes = lanes.max(1);
        self.offload().workers.check()?;
        let threads = i32::try_from(self.threads).unwrap_or(1);
        let n_lanes = u32::try_from(lanes).map_err(|e| EngineError::ModelLoad {
            path: self.model_name().to_owned(),
            reason: format!("lanes: {e}"),
        })?;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(self.n_ctx.saturating_mul(n_lanes)))
            .with_n_seq_max(n_lanes)
            .with_kv_unified(false)
            .with_n_batch(BATCH as u32)
            .with_n_ubatch(BATCH as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = self
            .model
            .new_context(self.backend.llama(), params)
            .map_err(|e| {
                // A worker lost while its share of the KV cache was allocated: that, by name.
                self.offload()
                    .workers
                    .check()
                    .err()
                    .unwrap_or(EngineError::ModelLoad {
                        path: self.model_name().to_owned(),
                        reason: format!("context: {e}"),
                    })
            })?;
        Ok(Arc::new(Batch {
            engine: self,
            shared: Mutex::new(Shared {
                ctx,
                batch: LlamaBatch::new(BATCH, 1),
                lanes: (0..lanes).map(|_| Lane::new()).collect(),
                stats: BatchStats::default(),
            }),
            decoded: Condvar::new(),
        }))
    }
}

impl<'e> Batch<'e> {
    /// A free lane of this batch, for a session; [`EngineError::Busy`] when every lane is
    /// taken. The lane is freed (and its KV cells cleared) when the handle is dropped.
    pub(crate) fn open_lane(self: &Arc<Self>) -> Result<LaneHandle<'e>, EngineError> {
        let n_vocab = self.engine.tok.pieces.len();
        let mut shared = self.lock();
        let lanes = shared.lanes.len();
        let Some(seq) = shared.lanes.iter().position(|l| !l.open) else {
            return Err(EngineError::Busy { lanes });
        };
        let lane = &mut shared.lanes[seq];
        lane.open = true;
        lane.phase = Phase::Idle;
        lane.outcome = None;
        lane.unread = false;
        lane.logits.resize(n_vocab, 0.0);
        lane.tokens.reserve(BATCH);
        drop(shared);
        Ok(LaneHandle {
            batch: Arc::clone(self),
            seq,
        })
    }

    /// The engine this batch decodes for.
    pub(crate) fn engine(&self) -> &'e Engine {
        self.engine
    }

    /// Lanes of this batch.
    pub fn lanes(&self) -> usize {
        self.lock().lanes.len()
    }

    /// What this batch has decoded so far.
    pub fn stats(&self) -> BatchStats {
        self.lock().stats
    }

    fn lock(&self) -> MutexGuard<'_, Shared<'e>> {
        // A panic while holding the lock leaves nothing half-written that a decode relies
        // on: every lane's outcome is set before the lock is released.
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A session's place in a [`Batch`].
pub(crate) struct LaneHandle<'e> {
    batch: Arc<Batch<'e>>,
    seq: usize,
}

impl<'e> LaneHandle<'e> {
    /// The lane's sequence id in the KV cache.
    pub(crate) fn seq(&self) -> u32 {
        self.seq as u32
    }

    /// Append `tokens` at positions `start..` of this lane and decode them with the other
    /// lanes' pending tokens; with `want_logits`, the last token's logits are swapped into
    /// `logits` (which must be the vocabulary's length).
    pub(crate) fn decode(
        &self,
        tokens: &[LlamaToken],
        start: usize,
        want_logits: bool,
        logits: &mut Vec<f32>,
    ) -> Result<(), EngineError> {
        self.submit(tokens, start, want_logits)?;
        if want_logits {
            self.take_logits(logits)?;
        }
        Ok(())
    }

    /// Swap the logits of this lane's last decode into `logits`, reading them from llama.cpp
    /// first if nobody has (which waits for a GPU's or a worker's forward pass to end). A
    /// worker lost meanwhile made them of stand-in zeros: its typed error instead.
    pub(crate) fn take_logits(&self, logits: &mut Vec<f32>) -> Result<(), EngineError> {
        let mut shared = self.batch.lock();
        shared.read_logits(self.seq);
        std::mem::swap(&mut shared.lanes[self.seq].logits, logits);
        drop(shared);
        self.batch.engine.offload().workers.check()
    }

    /// Hand `tokens` (positions `start..`) to the next decode and wait until it ran; the
    /// logits (with `want_logits`) stay in llama.cpp until [`Self::take_logits`].
    pub(crate) fn submit(
        &self,
        tokens: &[LlamaToken],
        start: usize,
        want_logits: bool,
    ) -> Result<(), EngineError> {
        if tokens.is_empty() {
            return Ok(());
        }
        // A lost worker took the model's layers with it: nothing decodes until it is reloaded.
        let workers = &self.batch.engine.offload().workers;
        workers.check()?;
        if tokens.len() > BATCH {
            return Err(EngineError::Decode(format!(
                "{} tokens in one step; at most {BATCH}",
                tokens.len()
            )));
        }
        let b = &self.batch;
        let mut shared = b.lock();
        {
            let lane = &mut shared.lanes[self.seq];
            lane.tokens.clear();
            lane.tokens.extend_from_slice(tokens);
            lane.start = start;
            lane.want_logits = want_logits;
            lane.outcome = None;
            lane.phase = Phase::Pending;
        }
        loop {
            if let Some(outcome) = shared.lanes[self.seq].outcome.take() {
                // Lost during this decode: the relay's stand-in replies made its logits.
                workers.check()?;
                return outcome.map_err(EngineError::Decode);
            }
            if !shared.lanes.iter().any(|l| l.phase == Phase::Choosing) {
                shared.decode_pending();
                b.decoded.notify_all();
                continue;
            }
            let (next, waited) = b
                .decoded
                .wait_timeout(shared, STRAGGLER_WAIT)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            shared = next;
            if waited.timed_out() && shared.lanes[self.seq].outcome.is_none() {
                shared.decode_pending();
                b.decoded.notify_all();
            }
        }
    }

    /// This lane stops generating: other lanes no longer wait for it.
    pub(crate) fn pause(&self) {
        let mut shared = self.batch.lock();
        shared.lanes[self.seq].phase = Phase::Idle;
        drop(shared);
        self.batch.decoded.notify_all();
    }

    /// The workers holding some of the model's layers (none: all here).
    pub(crate) fn workers(&self) -> &crate::rpc::Workers {
        &self.batch.engine.offload().workers
    }

    /// Run `f` on the context (KV-cache edits, state files) while no decode runs.
    pub(crate) fn with_ctx<T>(&self, f: impl FnOnce(&mut LlamaContext<'e>, u32) -> T) -> T {
        let mut shared = self.batch.lock();
        f(&mut shared.ctx, self.seq())
    }
}

impl Drop for LaneHandle<'_> {
    fn drop(&mut self) {
        let mut shared = self.batch.lock();
        let seq = self.seq();
        let _ = shared.ctx.clear_kv_cache_seq(Some(seq), None, None);
        let lane = &mut shared.lanes[self.seq];
        lane.open = false;
        lane.unread = false;
        lane.phase = Phase::Idle;
        drop(shared);
        self.batch.decoded.notify_all();
    }
}

impl Shared<'_> {
    /// Copy lane `seq`'s row of the last decode's logits, if it wants it and has not got it.
    fn read_logits(&mut self, seq: usize) {
        let lane = &mut self.lanes[seq];
        if lane.unread {
            lane.unread = false;
            let row = self.ctx.get_logits_ith(lane.index);
            lane.logits.clear();
            lane.logits.extend_from_slice(row);
        }
    }

    /// Decode every pending lane (in as many `llama_decode`s as [`BATCH`] requires), setting
    /// each one's outcome; the logits stay in llama.cpp until read.
    fn decode_pending(&mut self) {
        while self.lanes.iter().any(|l| l.phase == Phase::Pending) {
            // The next decode overwrites llama.cpp's logits: read every lane's still unread.
            for seq in 0..self.lanes.len() {
                self.read_logits(seq);
            }
            self.batch.clear();
            let mut used = 0usize;
            for steps_first in [true, false] {
                for (seq, lane) in self.lanes.iter_mut().enumerate() {
                    let is_step = lane.tokens.len() <= STEP_TOKENS;
                    if lane.phase != Phase::Pending
                        || lane.in_batch
                        || is_step != steps_first
                        || used + lane.tokens.len() > BATCH
                    {
                        continue;
                    }
                    match add_lane(&mut self.batch, lane, seq) {
                        Ok(()) => {
                            used += lane.tokens.len();
                            lane.in_batch = true;
                        }
                        Err(e) => finish(lane, Err(e)),
                    }
                }
            }
            if used == 0 {
                continue;
            }
            let started = Instant::now();
            let result = self.ctx.decode(&mut self.batch).map_err(|e| e.to_string());
            self.stats.decode_us += started.elapsed().as_micros() as u64;
            self.stats.decodes += 1;
            self.stats.tokens += used as u64;
            for lane in self.lanes.iter_mut().filter(|l| l.in_batch) {
                lane.in_batch = false;
                self.stats.lane_steps += 1;
                match &result {
                    Ok(()) => {
                        lane.unread = lane.want_logits;
                        finish(lane, Ok(()));
                    }
                    Err(e) => {
                        lane.unread = false;
                        finish(lane, Err(e.clone()));
                    }
                }
            }
        }
    }
}

/// Put a lane's tokens into the batch (logits for its last one when it wants them).
fn add_lane(batch: &mut LlamaBatch<'_>, lane: &mut Lane, seq: usize) -> Result<(), String> {
    let seq_id = i32::try_from(seq).map_err(|e| e.to_string())?;
    let n = lane.tokens.len();
    for (i, &t) in lane.tokens.iter().enumerate() {
        let pos = i32::try_from(lane.start + i).map_err(|e| e.to_string())?;
        let last = i + 1 == n;
        batch
            .add(t, pos, &[seq_id], lane.want_logits && last)
            .map_err(|e| e.to_string())?;
        if last {
            lane.index = batch.n_tokens() - 1;
        }
    }
    Ok(())
}

fn finish(lane: &mut Lane, outcome: Result<(), String>) {
    lane.outcome = Some(outcome);
    lane.phase = Phase::Choosing;
}
