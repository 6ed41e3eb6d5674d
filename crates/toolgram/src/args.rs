//! Argument types several commands share (`call`, `render`, `generate`, `grammar`, `serve`,
//! `eval`, `bench`): the engine's settings, the levers on rightness, the call mode, the think
//! block, the repeat policy and where the model's layers go, as clap reads them and as core,
//! the engine and the runtime name them. Parsing only.

/// `--threads`' help, one wording for every command that loads a model (the rule is
/// `toolgram_engine::default_threads`).
const THREADS_HELP: &str = "CPU threads [default: one per physical core this process \
may use — llama.cpp's rule: hyperthreads of one core count once; on a GPU they only feed it]";
use toolgram_core::define::request::{Mode, Plan, Think};
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
    /// Plan, then calls, where several calls may be made: `on` (the default) — call or text is
    /// chosen as without a plan, and a reply that calls is then counted (`Number of tool calls
    /// needed: N`, N of 1-9): at 1 it stands, at more it is decoded again and makes exactly N
    /// calls; `count` — that count chooses call or text too (0: text); `off` — no plan.
    /// Measured through BFCL's own harness (the default model, all 1,390 non-live items, ours):
    /// the defaults (`on`, with the count bias) 51.9 by BFCL's formula, parallel 51.0,
    /// irrelevance 40.4 in real declines; `off` 32.2 (parallel 0); `count` 47.2, but 80 of its
    /// declines were calls hidden in text; the 1.5B (`--model large`) under the defaults 66.3,
    /// parallel 68.0, against 64.7 under `count` (docs/eval.md, "Right by default"). Given here
    /// or in a request, its line is returned as reasoning; on by default, it is not.
    #[arg(long, value_name = "on|off|count", num_args = 0..=1, require_equals = true,
        default_missing_value = "on", value_parser = plan)]
    pub plan: Option<Plan>,
    /// Added to the logits of the tokens that open a call where the reply may call or not
    /// (tool_choice auto; under --plan count, to the counts 1-9), -100 to 100: above 0 calls
    /// more often, below 0 declines more often. Default: +4 where 8 tools or more are offered
    /// (an agent's pool: Claude Code's first turn leans to text by 3.8 logits on the default
    /// model; BFCL offers 1 to 4), -2 under --plan count, else 0 (docs/eval.md, "Call or
    /// text").
    #[arg(long, allow_negative_numbers = true, value_parser = call_bias)]
    pub call_bias: Option<f32>,
    /// Added to a plan's counts of more than one call (2-9) against one, at its count, -100 to
    /// 100: above 0 several calls more often. Default: +1.5 where one tool is offered, else 0.
    /// Measured on BFCL (the default model, ours): with one tool the count says 1 where several
    /// calls are due, and +1.5 lifts `parallel` from 32.0 to 51.0 on BFCL's own harness (all
    /// 200 items); over several tools it already counts high (`multiple`, one call due: 74 % at
    /// 0, 62 % at +1, a sample); the 1.5B too gains from +1.5 on one tool (BFCL's formula 69.7
    /// against 68.3 at 0, a sample). Under that default a reply counted at several that repeats
    /// a call or runs out of tokens gives way to one call (docs/eval.md, "The count").
    #[arg(long, allow_negative_numbers = true, value_parser = call_bias)]
    pub count_bias: Option<f32>,
    /// Ballots: answer each request this many times at once (the first as asked, the others
    /// sampled at 0.7 or the request's temperature if higher) and return the answer most of
    /// them give, calls compared as JSON values (docs/eval.md, "Votes").
    #[arg(long, default_value_t = 1, value_parser = votes)]
    pub votes: usize,
    /// Free text that repeats itself verbatim (one span written 4 times or more in a row, 128
    /// tokens of it repeated): `stop` (the default) ends the reply there, keeping what was
    /// written, and says so in `toolgram.repeated_text`; `keep` lets it run to the token
    /// limit. On the default model (ours): 3 of the 22 BFCL replies that ran to 2,048 tokens
    /// (~270 s each here) repeated one span verbatim; `simple_java_96` now ends after 306
    /// tokens in 10.3 s. A call that loops (8 copies, 512 tokens) is cut as the token limit
    /// would cut it, only sooner: 9 of 10 such BFCL replies in 542-1,390 tokens, same verdicts
    /// (docs/eval.md, "Text that repeats itself").
    #[arg(long, value_enum, default_value_t = RepeatedText::Stop)]
    pub repeated_text: RepeatedText,
}

/// `--repeated-text stop|keep`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RepeatedText {
    /// End the reply where its text repeats itself.
    Stop,
    /// Let it run to the token limit.
    Keep,
}

impl RepeatedText {
    /// Whether such text is stopped (`Sampling::stop_repeated_text`).
    pub(crate) fn stops(self) -> bool {
        self == Self::Stop
    }
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
    /// Workers to put layers on, comma-separated HOST:PORT (`toolgram worker` on each, from the
    /// same build). With `--gpu-layers auto` every host, this one included, holds an equal
    /// share of the layers; the grammar and sampling stay here (docs/distributed.md).
    #[arg(long, value_delimiter = ',', value_name = "HOST:PORT")]
    pub rpc: Vec<String>,
    /// The longest wait on a worker, to connect or for one step; past it the worker is lost
    /// and the request a typed error (`worker_unavailable`).
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    pub rpc_timeout_s: u64,
}

impl GpuArgs {
    /// The engine's options.
    pub(crate) fn options(&self) -> GpuOptions {
        GpuOptions {
            layers: self.gpu_layers,
            devices: self.device.clone(),
            split_mode: self.split_mode,
            workers: self.rpc.clone(),
            worker_timeout: Some(std::time::Duration::from_secs(self.rpc_timeout_s.max(1))),
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

/// `--plan on|off|count`.
pub(crate) fn plan(s: &str) -> Result<Plan, String> {
    Plan::from_name(s).ok_or_else(|| format!("`{s}`: on, off or count"))
}

impl LeverArgs {
    /// The plan in force: as given, else [`Plan::Calls`].
    pub(crate) fn plan(&self) -> Plan {
        self.plan.unwrap_or(Plan::Calls)
    }

    /// Whether the plan was asked for by name (its line is then shown as reasoning).
    pub(crate) fn plan_asked(&self) -> bool {
        self.plan.is_some_and(Plan::is_on)
    }

    /// Set these levers on a request (`call`, `render`).
    pub(crate) fn apply(&self, req: &mut toolgram_runtime::Request) {
        req.shape.plan = self.plan();
        req.sampling.call_bias = self.call_bias;
        req.sampling.count_bias = self.count_bias;
        req.votes = self.votes;
        req.sampling.stop_repeated_text = self.repeated_text.stops();
        req.show_plan = self.plan_asked();
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
