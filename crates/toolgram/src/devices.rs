//! `toolgram devices`: the GPU backends this build has and every device llama.cpp's backends
//! found, by the names `--device` takes. Listing only: where a model's layers went is
//! reported by the commands that load one (`/health`, `toolgram.timings`, bench JSON).

use clap::Args;
use serde_json::json;
use std::io::Write;
use toolgram_engine::gpu::{self, BACKENDS_BUILT};

#[derive(Args)]
pub(crate) struct DevicesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let devices = gpu::devices()?;
    match print(args, &devices) {
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

fn print(args: &DevicesArgs, devices: &[gpu::Device]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let list: Vec<_> = devices.iter().map(gpu::Device::to_json).collect();
        let doc = json!({"backends_built": BACKENDS_BUILT, "devices": list});
        return writeln!(out, "{doc:#}");
    }
    if BACKENDS_BUILT.is_empty() {
        writeln!(
            out,
            "GPU backends built: none (build with --features vulkan, cuda or metal)"
        )?;
    } else {
        writeln!(out, "GPU backends built: {}", BACKENDS_BUILT.join(", "))?;
    }
    writeln!(
        out,
        "{:<10} {:<8} {:<6} {:>10} {:>10}  description",
        "name", "backend", "type", "total MiB", "free MiB"
    )?;
    for d in devices {
        writeln!(
            out,
            "{:<10} {:<8} {:<6} {:>10} {:>10}  {}",
            d.name,
            d.backend,
            d.kind,
            d.memory_total >> 20,
            d.memory_free >> 20,
            d.description
        )?;
    }
    if !devices.iter().any(gpu::Device::is_gpu) {
        writeln!(
            out,
            "no GPU: models run on the CPU (--gpu-layers auto falls back to it)"
        )?;
    }
    Ok(())
}
