//! Decoding: sessions on the lanes of a batched llama.cpp context, the sample/accept loop under
//! the grammar's mask, the call-or-text and count choices, the plan's decodes, the loop guard,
//! the text guard, think budgets, stored prefixes, free generation, the engine as the retry
//! loop's model, and mask timings (`instrument`). This group must not compile grammars or render prompts:
//! `grammar` and `template` do.

pub(crate) mod batch;
pub(crate) mod call_bias;
pub(crate) mod call_model;
pub(crate) mod generate;
pub mod instrument;
pub(crate) mod loop_guard;
pub(crate) mod prefix;
pub(crate) mod sample;
pub(crate) mod session;
pub(crate) mod text_guard;
pub(crate) mod think;
