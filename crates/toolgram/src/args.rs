//! Argument types several commands share (`call`, `render`, `generate`, `grammar`, `serve`,
//! `eval`, `bench`): the call mode, the think block, the repeat policy and where the model's
//! layers go, as clap reads them and as core, the engine and the runtime name them. Parsing only.

use clap::ValueEnum;

/// `--threads`' help, one wording for every command that loads a model (the rule is
/// `toolgram_engine::default_threads`).
pub(crate) const THREADS_HELP: &str = "CPU threads [default: one per physical core this process \
may use — llama.cpp's rule: hyperthreads of one core count once; on a GPU they only feed it]";
use toolgram_core::define::request::{Mode, Think};
use toolgram_engine::gpu::{GpuLayers, GpuOptions, SplitMode};

/// Where the model's layers go: `--gpu-layers`, `--device`, `--split-mode` (the values
/// llama-server's `-ngl`, `-dev` and `-sm` take).
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct GpuArgs {
    /// Layers to offload to the GPU: a count, `all`, or `auto` (what fits, by llama.cpp's fit
    /// logic; the CPU, said on stderr, when no GPU can be used). `0`: the CPU only.
    #[arg(long, default_value = "auto", value_name = "N|all|auto")]
    pub gpu_layers: GpuLayers,
    /// The GPUs to use, comma-separated (`toolgram devices` lists them; `none`: no GPU).
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub device: Vec<String>,
    /// How layers are split over several GPUs: none, layer or row.
    #[arg(long, value_name = "MODE")]
    pub split_mode: Option<SplitMode>,
}

impl GpuArgs {
    /// The engine's options.
    pub(crate) fn options(&self) -> GpuOptions {
        GpuOptions {
            layers: self.gpu_layers,
            devices: self.device.clone(),
            split_mode: self.split_mode,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// Full grammar: syntax, tool name and argument schema.
    Grammar,
    /// Syntax and tool name; any JSON object as arguments, validated after parsing.
    Json,
    /// No constraint: tools and example calls in the prompt, the reply parsed leniently and
    /// validated, retried on failure.
    Prompt,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ThinkArg {
    /// No reasoning block.
    Off,
    /// The reply may open with a reasoning block (the family's own, else <think>…</think>).
    Optional,
    /// The reply must open with a reasoning block (the family's own, else <think>…</think>).
    Required,
}

impl From<ThinkArg> for Think {
    fn from(t: ThinkArg) -> Self {
        match t {
            ThinkArg::Off => Think::Off,
            ThinkArg::Optional => Think::Optional,
            ThinkArg::Required => Think::Required,
        }
    }
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Grammar => Mode::Grammar,
            ModeArg::Json => Mode::Json,
            ModeArg::Prompt => Mode::Prompt,
        }
    }
}

/// `--repeats allow|list|forbid` (`call` and `serve`).
pub(crate) fn repeats(s: &str) -> Result<toolgram_runtime::Repeats, String> {
    toolgram_runtime::Repeats::from_name(s).ok_or_else(|| format!("`{s}`: allow, list or forbid"))
}

/// `--votes K` (`call`, `serve`, `eval`): ballots from 1 to
/// [`toolgram_runtime::votes::MAX_VOTES`].
pub(crate) fn votes(s: &str) -> Result<usize, String> {
    let max = toolgram_runtime::votes::MAX_VOTES;
    match s.parse::<usize>() {
        Ok(k) if (1..=max).contains(&k) => Ok(k),
        _ => Err(format!("`{s}`: a number of ballots from 1 to {max}")),
    }
}

/// `--call-bias B` (`call`, `serve`, `eval`): a finite logit offset from -100 to 100, as
/// OpenAI's `logit_bias` values are.
pub(crate) fn call_bias(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(b) if (-100.0..=100.0).contains(&b) => Ok(b),
        _ => Err(format!("`{s}`: a number from -100 to 100")),
    }
}
