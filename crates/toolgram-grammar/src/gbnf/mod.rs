//! GBNF, llama.cpp's grammar dialect: [`parse`] reads it into the IR exactly as llama.cpp's
//! `llama_grammar_parser` would (same escapes, same repetition limits, undefined rules and
//! left recursion refused), [`emit`] writes IR as GBNF llama.cpp accepts.
//!
//! This module must not call llama.cpp: `toolgram-engine::gbnf_check` does that in a child
//! process.

mod read;
mod write;

pub use read::parse;
pub use write::emit;
