//! Argument types several commands share (`call`, `render`, `generate`, `grammar`, `serve`,
//! `eval`, `bench`): the engine's settings, the levers on rightness, the call mode, the think
//! block, the repeat policy and where the model's layers go, as clap reads them and as core,
//! the engine and the runtime name them. Parsing only.

/// `--threads`' help, one wording for every command that loads a model (the rule is
/// `toolgram_engine::default_threads`).
const THREADS_HELP: &str = "CPU threads [default: one per physical core this process \
may use — llama.cpp's rule: hyperthreads of one core count once; on a GPU they only feed it]";
use toolgram_core::define::request::{Mode, Think};
use toolgram_engine::EngineOptions;
use toolgram_engine::gpu::{GpuLayers, GpuOptions, SplitMode};

/// The embedded engine's settings every command that loads a model takes.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct EngineArgs {
    #[arg(long, help = THREADS_HELP)]
    pub threads: Option<u32>,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// Context window in tokens (default: the model's training context; under `serve` at most
    /// 32768, as coding agents send 10–25k tokens of instructions and tools on every turn).
    #[arg(long)]
    pub ctx_size: Option<u32>,
}

impl EngineArgs {
    /// The engine's options these flags set (the rest at their defaults).
    pub(crate) fn options(&self) -> EngineOptions {
        EngineOptions {
            threads: self.threads,
            n_ctx: self.ctx_size,
            gpu: self.gpu.options(),
            ..EngineOptions::default()
        }
    }
}

/// The levers on a call's rightness (docs/eval.md): plan, call bias, votes. Under `serve` a
/// request's `plan`, `call_bias` and `votes` fields override them.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct LeverArgs {
    /// Plan, then calls: where several calls may be made, the reply first states how many it
    /// will make (returned as reasoning), then makes exactly that many (docs/eval.md, "Plan,
    /// then calls").
    #[arg(long)]
    pub plan: bool,
    /// Added to the logits of the tokens that open a call where the reply may call or not
    /// (tool_choice auto; under --plan, to the counts 1-9), -100 to 100: above 0 calls more
    /// often, below 0 declines more often (default: -2 under --plan, else 0; docs/eval.md,
    /// "Call or text").
    #[arg(long, allow_negative_numbers = true, value_parser = call_bias)]
    pub call_bias: Option<f32>,
    /// Ballots: answer each request this many times at once (the first as asked, the others
    /// sampled at 0.7 or the request's temperature if higher) and return the answer most of
    /// them give, calls compared as JSON values (docs/eval.md, "Votes").
    #[arg(long, default_value_t = 1, value_parser = votes)]
    pub votes: usize,
}

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

/// `--mode grammar|json|prompt`.
pub(crate) fn mode(s: &str) -> Result<Mode, String> {
    Mode::from_name(s).ok_or_else(|| format!("`{s}`: grammar, json or prompt"))
}

/// `--think off|optional|required`.
pub(crate) fn think(s: &str) -> Result<Think, String> {
    Think::from_name(s).ok_or_else(|| format!("`{s}`: off, optional or required"))
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
