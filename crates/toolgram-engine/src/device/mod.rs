//! Where the model runs: the process's llama.cpp backend, GPU offload (devices, layers, the
//! fallback to the CPU), layers on other hosts (RPC workers), thread counts, and the measured decode speed. This group must not
//! load a model or decode.

pub(crate) mod backend;
pub mod gpu;
pub mod rpc;
pub mod speed;
pub(crate) mod threads;
