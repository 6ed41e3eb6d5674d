//! Where the weights go: the GPU backends this build has (cargo features `cuda`, `vulkan`,
//! `metal`, `rocm`), the devices llama.cpp sees — other hosts' too (`--rpc`, see `rpc`) — and
//! how many layers a model puts on them (`--gpu-layers auto|all|N`, `--device`,
//! `--split-mode`). What happened is reported as an [`Offload`] (`/health`,
//! `toolgram.timings`, every bench JSON).
//!
//! With workers, `auto` gives each host — this one and every worker — an equal share of the
//! layers: this host's CPU keeps the first ones, and the rest are split by free memory among
//! this host's GPUs (if any) and the workers' devices (llama.cpp's rule; its fit logic is not
//! used then); a count or `all` is taken as llama-server takes `-ngl` beside `--rpc`.
//!
//! `auto` offloads what llama.cpp's own fit logic says fits (`common_fit_params`, built in GPU
//! builds only) and falls back to the CPU, saying why, when no GPU can be used; a count or
//! `all` is a promise: it fails rather than run somewhere else. A build without a GPU backend
//! refuses a non-zero count, naming the feature.
//!
//! This module must not generate or read a model's vocabulary: it loads weights and says where.

use crate::error::EngineError;
use crate::rpc::{self, Workers};
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::{LlamaModelParams, LlamaSplitMode};
use llama_cpp_2::{LlamaBackendDeviceType, list_llama_ggml_backend_devices};
use serde_json::{Value, json};
use std::path::Path;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;

/// The GPU backends compiled into this build (empty: CPU only).
pub const BACKENDS_BUILT: &[&str] = &[
    #[cfg(feature = "cuda")]
    "CUDA",
    #[cfg(feature = "vulkan")]
    "Vulkan",
    // llama-cpp-2 builds Metal on Apple silicon whatever the features say.
    #[cfg(any(feature = "metal", all(target_os = "macos", target_arch = "aarch64")))]
    "Metal",
    #[cfg(feature = "rocm")]
    "ROCm",
    // llama.cpp as shared libraries (`dynamic-link`): its backends are those the libraries
    // found at run time were built with (`scripts/gpu-check` runs on a CUDA build of them).
    #[cfg(feature = "dynamic-link")]
    "llama.cpp's shared libraries",
];

/// How many layers to offload (`--gpu-layers`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GpuLayers {
    /// What fits on the GPU (llama.cpp's fit logic); the CPU when there is no usable GPU.
    #[default]
    Auto,
    /// Every layer, or an error.
    All,
    /// This many layers (`0`: CPU only).
    Count(u32),
}

impl FromStr for GpuLayers {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Self::Auto),
            "all" => Ok(Self::All),
            n => n
                .parse()
                .map(Self::Count)
                .map_err(|_| format!("`{s}`: a layer count, `all` or `auto`")),
        }
    }
}

impl std::fmt::Display for GpuLayers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::All => f.write_str("all"),
            Self::Count(n) => write!(f, "{n}"),
        }
    }
}

/// How layers are split over several GPUs (`--split-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMode {
    /// One GPU (the first device given).
    None,
    /// Whole layers per GPU (llama.cpp's default).
    Layer,
    /// Rows of each layer's tensors across GPUs.
    Row,
}

impl FromStr for SplitMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Self::None),
            "layer" => Ok(Self::Layer),
            "row" => Ok(Self::Row),
            _ => Err(format!("`{s}`: none, layer or row")),
        }
    }
}

/// Where to put a model's layers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuOptions {
    /// How many layers.
    pub layers: GpuLayers,
    /// The devices to use, by name (`toolgram devices`); empty: every GPU llama.cpp found.
    pub devices: Vec<String>,
    /// How to split over several GPUs (`None`: llama.cpp's default, by layer).
    pub split_mode: Option<SplitMode>,
    /// Workers holding some of the layers (`--rpc host:port,…`; `toolgram worker` there).
    pub workers: Vec<String>,
    /// The longest wait on a worker (`None`: [`rpc::DEFAULT_TIMEOUT`]).
    pub worker_timeout: Option<Duration>,
}

impl GpuOptions {
    /// The same choice as command-line arguments under the given flag names: `toolgram`'s
    /// (`--gpu-layers`, `--device`, `--split-mode`) or llama-server's (`-ngl`, `-dev`, `-sm`),
    /// which take the same values.
    pub fn cli_args(&self, [layers, device, split]: [&str; 3]) -> Vec<String> {
        let mut args = vec![layers.to_owned(), self.layers.to_string()];
        if !self.devices.is_empty() {
            args.extend([device.to_owned(), self.devices.join(",")]);
        }
        if let Some(mode) = self.split_mode {
            let mode = match mode {
                SplitMode::None => "none",
                SplitMode::Layer => "layer",
                SplitMode::Row => "row",
            };
            args.extend([split.to_owned(), mode.to_owned()]);
        }
        args
    }
}

/// A device llama.cpp can run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// ggml's name (`Vulkan0`, `CUDA0`, `CPU`): what `--device` takes.
    pub name: String,
    /// What the driver calls it (`NVIDIA H200`, `llvmpipe (LLVM 15.0.6, 256 bits)`).
    pub description: String,
    /// The backend (`Vulkan`, `CUDA`, `CPU`).
    pub backend: String,
    /// `gpu`, `igpu`, `cpu`, `accel` or `unknown`.
    pub kind: &'static str,
    /// Memory in bytes, and how much of it is free.
    pub memory_total: usize,
    /// Free memory in bytes.
    pub memory_free: usize,
}

impl Device {
    /// Whether layers can be offloaded to it.
    pub fn is_gpu(&self) -> bool {
        matches!(self.kind, "gpu" | "igpu")
    }

    /// The device as JSON (`toolgram devices --json`).
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "description": self.description, "backend": self.backend,
            "type": self.kind, "memory_total": self.memory_total, "memory_free": self.memory_free})
    }
}

/// Every device llama.cpp's backends found, in ggml's order (the index `--device` resolves to).
pub fn devices() -> Result<Vec<Device>, EngineError> {
    let _backend = crate::backend::backend()?;
    Ok(list_llama_ggml_backend_devices()
        .into_iter()
        .map(|d| Device {
            name: d.name,
            description: d.description,
            backend: d.backend,
            kind: match d.device_type {
                LlamaBackendDeviceType::Cpu => "cpu",
                LlamaBackendDeviceType::Gpu => "gpu",
                LlamaBackendDeviceType::IntegratedGpu => "igpu",
                LlamaBackendDeviceType::Accelerator => "accel",
                LlamaBackendDeviceType::Unknown => "unknown",
            },
            memory_total: d.memory_total,
            memory_free: d.memory_free,
        })
        .collect())
}

/// Where a loaded model's layers are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offload {
    /// `CPU`, or the GPU backend holding the offloaded layers (`Vulkan`, `CUDA`, …).
    pub backend: String,
    /// The devices holding them, `name (description)`; a worker's is `RPCn (host:port)`.
    pub devices: Vec<String>,
    /// Layers on those devices, of [`Self::layers_total`] (llama.cpp counts the output layer).
    pub gpu_layers: u32,
    /// The model's layers plus its output layer.
    pub layers_total: u32,
    /// What was asked for: `auto`, `all` or a count.
    pub requested: GpuLayers,
    /// Why it is not what was asked for (under `auto`: no usable GPU, or the load failed).
    pub fallback: Option<String>,
    /// The workers holding some of the layers, and whether they still do.
    pub workers: Workers,
}

impl Offload {
    /// The object `/health`, `toolgram.timings` and bench JSON carry.
    pub fn to_json(&self) -> Value {
        let mut out = json!({"backend": self.backend, "devices": self.devices,
            "gpu_layers": self.gpu_layers, "layers": self.layers_total,
            "requested": self.requested.to_string(), "fallback": self.fallback});
        if !self.workers.is_empty() {
            out["workers"] = self.workers.to_json();
            out["local_layers"] = json!(self.layers_total.saturating_sub(self.gpu_layers));
        }
        out
    }
}

/// The devices `opts` selects: every GPU found, or the named ones (`none`: no GPU), then the
/// workers' devices. A worker another model of this process attached is not this model's.
fn selected(opts: &GpuOptions, workers: &Workers) -> Result<Vec<(usize, Device)>, EngineError> {
    let (remote, all): (Vec<_>, Vec<_>) = devices()?
        .into_iter()
        .enumerate()
        .partition(|(_, d)| d.backend == "RPC");
    let mut chosen = if opts.devices.iter().any(|d| d.eq_ignore_ascii_case("none")) {
        Vec::new()
    } else if opts.devices.is_empty() {
        all.into_iter().filter(|(_, d)| d.is_gpu()).collect()
    } else {
        opts.devices
            .iter()
            .map(|want| {
                all.iter()
                    .find(|(_, d)| d.name.eq_ignore_ascii_case(want) && d.is_gpu())
                    .cloned()
                    .ok_or_else(|| EngineError::Gpu(unknown_device(want, &all)))
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    for name in workers.device_names() {
        if let Some((i, d)) = remote.iter().find(|(_, d)| d.name == name) {
            let mut d = d.clone();
            d.description = workers.worker_of(name).unwrap_or_default().to_owned();
            chosen.push((*i, d));
        }
    }
    Ok(chosen)
}

fn unknown_device(want: &str, all: &[(usize, Device)]) -> String {
    let gpus: Vec<&str> = all
        .iter()
        .filter(|(_, d)| d.is_gpu())
        .map(|(_, d)| d.name.as_str())
        .collect();
    if BACKENDS_BUILT.is_empty() {
        format!("no GPU device `{want}`: {}", no_backend())
    } else if gpus.is_empty() {
        format!(
            "no GPU device `{want}`: {} found none (see `toolgram devices`)",
            BACKENDS_BUILT.join(", ")
        )
    } else {
        format!(
            "no GPU device `{want}`: this machine has {}",
            gpus.join(", ")
        )
    }
}

fn no_backend() -> String {
    "this toolgram was built without a GPU backend; build it with \
     `cargo build --release --features vulkan` (or cuda, metal) to offload layers"
        .to_owned()
}

/// Load the model at `path` with its layers where `opts` says; `n_ctx` is the context the
/// fit logic plans for.
pub(crate) fn load(
    backend: &LlamaBackend,
    path: &Path,
    opts: &GpuOptions,
    n_ctx: u32,
) -> Result<(LlamaModel, Offload), EngineError> {
    let load_err = |reason: String| EngineError::ModelLoad {
        path: path.display().to_string(),
        reason,
    };
    let workers = if opts.workers.is_empty() {
        Workers::default()
    } else {
        rpc::attach(
            &opts.workers,
            opts.worker_timeout.unwrap_or(rpc::DEFAULT_TIMEOUT),
        )?
    };
    // Layers on workers are a promise too: never a silent fallback to this host alone.
    let promised = opts.layers != GpuLayers::Auto || !workers.is_empty();
    let wants_gpu = promised && opts.layers != GpuLayers::Count(0);
    let requested = opts.layers;
    let mut opts = opts.clone();
    if !workers.is_empty() && opts.layers == GpuLayers::Auto {
        opts.layers = GpuLayers::Count(shared_out(path, 1 + workers.endpoints().len())?);
    }
    let opts = &opts;
    if BACKENDS_BUILT.is_empty() && wants_gpu && workers.is_empty() {
        return Err(EngineError::Gpu(format!(
            "--gpu-layers {}: {}",
            opts.layers,
            no_backend()
        )));
    }
    let gpus = selected(opts, &workers)?;
    // `--device none` is the CPU by choice: nothing fell back.
    let chose_cpu = opts.devices.iter().any(|d| d.eq_ignore_ascii_case("none"));
    let mut fallback = None;
    if gpus.is_empty() && wants_gpu {
        let why = if chose_cpu {
            "--device none gives it no GPU".to_owned()
        } else {
            format!(
                "{} found no usable GPU (see `toolgram devices`)",
                BACKENDS_BUILT.join(", ")
            )
        };
        return Err(EngineError::Gpu(format!(
            "--gpu-layers {}: {why}",
            opts.layers
        )));
    }
    if gpus.is_empty() && !chose_cpu && !BACKENDS_BUILT.is_empty() && !promised {
        fallback = Some(format!(
            "{} found no usable GPU: running on the CPU",
            BACKENDS_BUILT.join(", ")
        ));
    }
    let on_gpu = !gpus.is_empty() && opts.layers != GpuLayers::Count(0);
    let params = if on_gpu {
        gpu_params(path, opts, &gpus, n_ctx)?
    } else {
        cpu_params()?
    };
    let requested_layers = params.n_gpu_layers();
    let model = match LlamaModel::load_from_file(backend, path, &params) {
        Ok(model) => model,
        Err(e) if on_gpu && !promised => {
            fallback = Some(format!(
                "loading onto {} failed ({e}): running on the CPU",
                names(&gpus).join(", ")
            ));
            LlamaModel::load_from_file(backend, path, &*cpu_params()?)
                .map_err(|e| load_err(e.to_string()))?
        }
        Err(e) => return Err(load_err(e.to_string())),
    };
    if let Some(why) = &fallback {
        tracing::warn!("{why}");
    }
    let mut workers = workers;
    workers.settle();
    workers.check()?;
    let layers_total = model.n_layer() + 1;
    let gpu_layers = if on_gpu && fallback.is_none() {
        u32::try_from(requested_layers).map_or(layers_total, |n| n.min(layers_total))
    } else {
        0
    };
    let offload = Offload {
        backend: match gpus.first() {
            Some((_, d)) if gpu_layers > 0 => d.backend.clone(),
            _ => "CPU".to_owned(),
        },
        devices: if gpu_layers > 0 {
            names(&gpus)
        } else {
            Vec::new()
        },
        gpu_layers,
        layers_total,
        requested,
        fallback,
        workers,
    };
    tracing::info!(
        "{} of {} layers on {}",
        offload.gpu_layers,
        offload.layers_total,
        if gpu_layers > 0 {
            offload.devices.join(", ")
        } else {
            "the CPU".to_owned()
        }
    );
    Ok((model, offload))
}

/// Layers to put on the workers so that each of `hosts` (this one first) holds an equal share
/// of the model's blocks and output layer, this host rounding down.
fn shared_out(path: &Path, hosts: usize) -> Result<u32, EngineError> {
    let blocks = block_count(path).ok_or_else(|| EngineError::ModelLoad {
        path: path.display().to_string(),
        reason: "its GGUF header has no block count to share out over workers \
                 (give --gpu-layers a count)"
            .into(),
    })?;
    let total = blocks.saturating_add(1);
    let hosts = u32::try_from(hosts).unwrap_or(u32::MAX).max(1);
    Ok(total - total / hosts)
}

/// `<architecture>.block_count` from a GGUF header.
fn block_count(path: &Path) -> Option<u32> {
    use llama_cpp_2::gguf::GgufContext;
    let gguf = GgufContext::from_file(path)?;
    let arch_key = gguf.find_key("general.architecture");
    if arch_key < 0 || gguf.kv_type(arch_key) != llama_cpp_sys_2::GGUF_TYPE_STRING {
        return None;
    }
    let key = gguf.find_key(&format!("{}.block_count", gguf.val_str(arch_key)?));
    (key >= 0 && gguf.kv_type(key) == llama_cpp_sys_2::GGUF_TYPE_UINT32).then(|| gguf.val_u32(key))
}

fn names(gpus: &[(usize, Device)]) -> Vec<String> {
    gpus.iter()
        .map(|(_, d)| format!("{} ({})", d.name, d.description))
        .collect()
}

/// No GPU device and no layer on one.
fn cpu_params() -> Result<Pin<Box<LlamaModelParams>>, EngineError> {
    let params = LlamaModelParams::default()
        .with_n_gpu_layers(0)
        .with_devices(&[])
        .map_err(|e| EngineError::Gpu(e.to_string()))?;
    Ok(Box::pin(params))
}

/// The selected GPUs with the layers asked for, or (`auto`) what llama.cpp's fit logic says.
fn gpu_params(
    path: &Path,
    opts: &GpuOptions,
    gpus: &[(usize, Device)],
    n_ctx: u32,
) -> Result<Pin<Box<LlamaModelParams>>, EngineError> {
    let indices: Vec<usize> = gpus.iter().map(|(i, _)| *i).collect();
    let mut params = LlamaModelParams::default()
        .with_devices(&indices)
        .map_err(|e| EngineError::Gpu(e.to_string()))?;
    if let Some(mode) = opts.split_mode {
        params = params.with_split_mode(match mode {
            SplitMode::None => LlamaSplitMode::None,
            SplitMode::Layer => LlamaSplitMode::Layer,
            SplitMode::Row => LlamaSplitMode::Row,
        });
    }
    let mut params = Box::pin(match opts.layers {
        GpuLayers::Auto => params,
        GpuLayers::All => params.with_n_gpu_layers(u32::MAX),
        GpuLayers::Count(n) => params.with_n_gpu_layers(n),
    });
    if opts.layers == GpuLayers::Auto {
        fit(params.as_mut(), path, n_ctx);
    }
    Ok(params)
}

/// llama.cpp's fit logic (`common_fit_params`): the layers (and tensor split) that fit the
/// devices' free memory with a 1 GiB margin each, for a context of `n_ctx`. When it finds
/// no fit, llama.cpp's default (every layer) stands and a failed load falls back to the CPU.
#[cfg(any(
    feature = "cuda",
    feature = "vulkan",
    feature = "metal",
    feature = "rocm",
    feature = "dynamic-link"
))]
fn fit(params: Pin<&mut LlamaModelParams>, path: &Path, n_ctx: u32) {
    use llama_cpp_2::context::params::LlamaContextParams;
    let Ok(c_path) = std::ffi::CString::new(path.to_string_lossy().as_bytes()) else {
        return;
    };
    let mut cparams = LlamaContextParams::default().with_n_ctx(std::num::NonZeroU32::new(n_ctx));
    let mut margins = vec![1usize << 30; llama_cpp_2::max_devices()];
    if let Err(e) = params.fit_params(
        &c_path,
        &mut cparams,
        &mut margins,
        n_ctx.min(4096),
        1, // GGML_LOG_LEVEL_DEBUG: the fit's report goes to the debug log
    ) {
        tracing::warn!("llama.cpp's fit: {e}; offloading every layer");
    }
}

/// A build without a GPU backend has no devices to fit.
#[cfg(not(any(
    feature = "cuda",
    feature = "vulkan",
    feature = "metal",
    feature = "rocm",
    feature = "dynamic-link"
)))]
fn fit(_: Pin<&mut LlamaModelParams>, _: &Path, _: u32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_counts_parse_and_print_back() {
        for s in ["auto", "all", "0", "33"] {
            assert_eq!(s.parse::<GpuLayers>().unwrap().to_string(), s);
        }
        assert!("some".parse::<GpuLayers>().is_err());
        assert!("-1".parse::<GpuLayers>().is_err());
        assert_eq!("row".parse::<SplitMode>(), Ok(SplitMode::Row));
        assert!("rows".parse::<SplitMode>().is_err());
    }
}
