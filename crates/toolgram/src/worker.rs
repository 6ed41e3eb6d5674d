//! `toolgram worker`: lend this machine's devices to another host's model over ggml's RPC
//! protocol (`--rpc HOST:PORT` there), as llama.cpp's `rpc-server` does, from the same ggml as
//! the host that decodes (client and worker must speak one protocol version). It holds only
//! tensors; the grammar, the mask and the sampler stay on the decoding host.
//!
//! ggml RPC has no authentication and no encryption: anyone who reaches the port can run
//! computations and read what the worker holds. It listens on loopback unless told otherwise,
//! and warns when told. This module must not load a model.

use clap::Args;
use toolgram_engine::rpc;

#[derive(Args)]
pub(crate) struct WorkerArgs {
    /// Where to listen, HOST:PORT. Anything but loopback exposes the worker to every host that
    /// can reach it (ggml RPC has no authentication): use a private network, a firewall or an
    /// SSH tunnel (docs/distributed.md).
    #[arg(long, default_value = "127.0.0.1:50052", value_name = "HOST:PORT")]
    listen: String,
    /// CPU threads for the layers it holds (default: this machine's physical cores).
    #[arg(long)]
    threads: Option<usize>,
}

pub(crate) fn run(args: &WorkerArgs) -> anyhow::Result<()> {
    if !rpc::is_loopback(&args.listen) {
        eprintln!(
            "WARNING: toolgram worker listening on {}: ggml RPC has no authentication or \
             encryption — any host that reaches this port can use this machine and read what \
             it holds. Keep it on a private network (docs/distributed.md).",
            args.listen
        );
    }
    let threads = args
        .threads
        .unwrap_or_else(|| toolgram_engine::default_threads() as usize);
    eprintln!(
        "toolgram worker: serving this machine's devices on {} ({threads} threads); \
         decode with `--rpc {}` on the host that loads the model",
        args.listen, args.listen
    );
    rpc::serve_worker(&args.listen, threads)?;
    Ok(())
}
