//! `toolgram devices`: the GPU backends this build has and every device llama.cpp's backends
//! found, by the names `--device` takes. Listing only: where a model's layers went is
//! reported by the commands that load one (`/health`, `toolgram.timings`, bench JSON).

use clap::Args;
use serde_json::json;
use toolgram_engine::gpu::{self, BACKENDS_BUILT};

#[derive(Args)]
pub(crate) struct DevicesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let devices = gpu::devices()?;
    if args.json {
        let list: Vec<_> = devices.iter().map(gpu::Device::to_json).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"backends_built": BACKENDS_BUILT, "devices": list})
            )?
        );
        return Ok(());
    }
    if BACKENDS_BUILT.is_empty() {
        println!("GPU backends built: none (build with --features vulkan, cuda or metal)");
    } else {
        println!("GPU backends built: {}", BACKENDS_BUILT.join(", "));
    }
    println!(
        "{:<10} {:<8} {:<6} {:>10} {:>10}  description",
        "name", "backend", "type", "total MiB", "free MiB"
    );
    for d in &devices {
        println!(
            "{:<10} {:<8} {:<6} {:>10} {:>10}  {}",
            d.name,
            d.backend,
            d.kind,
            d.memory_total >> 20,
            d.memory_free >> 20,
            d.description
        );
    }
    if !devices.iter().any(gpu::Device::is_gpu) {
        println!("no GPU: models run on the CPU (--gpu-layers auto falls back to it)");
    }
    Ok(())
}
