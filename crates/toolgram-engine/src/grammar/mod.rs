//! Grammars for the model's vocabulary: a request's call grammar compiled once
//! (`compiled_call`), a user's grammar for free generation (`generation`), the compiled-grammar
//! cache, and GBNF checked with llama.cpp's own sampler (`gbnf_check`). This group must not
//! decode.

pub(crate) mod compiled_call;
pub mod gbnf_check;
pub(crate) mod generation;
pub(crate) mod grammar_cache;
