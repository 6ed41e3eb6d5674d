//! The servers a benchmark runs side by side — `toolgram serve`, the one-shot CLI,
//! llama-server — and the settings they share, so that every side runs the same model on the
//! same threads, layers and context.
//!
//! This module must not start a server: the benchmarks do.

use std::path::Path;
use toolgram_engine::gpu::GpuOptions;

/// The peers of a benchmark and what they share.
#[derive(Debug, Clone, Copy)]
pub struct Peers<'a> {
    /// The `toolgram` binary (its `serve`, or one-shot `call`).
    pub toolgram: &'a Path,
    /// The `llama-server` binary.
    pub llama_server: &'a Path,
    /// The GGUF model file, for every side.
    pub model: &'a Path,
    /// CPU threads, every side.
    pub threads: u32,
    /// Where the layers go, every side.
    pub gpu: &'a GpuOptions,
    /// Context per sequence, every side.
    pub ctx: u32,
}
