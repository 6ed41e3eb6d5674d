//! # toolgram-engine — constrained tool calling on an embedded llama.cpp model
//!
//! The decode stage of toolgram: a GGUF model loaded in-process through `llama-cpp-2`, its
//! own chat template rendered with `minijinja`, and an llguidance token mask applied at every
//! step by our own sample/accept loop, so the reply is a valid call in the model's native
//! syntax by construction. Models from the registry are fetched on first use.
//!
//! ```no_run
//! use toolgram_core::{ChatMessage, ToolChoice, ToolSet};
//! use toolgram_engine::{CallRequest, CallShape, Engine, EngineOptions, models};
//!
//! let tools = ToolSet::from_json_str(r#"[{"type": "function", "function": {
//!     "name": "get_weather",
//!     "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
//!                    "required": ["city"]}}}]"#)?;
//! let path = models::resolve(None)?;            // the default model, fetched once
//! let engine = Engine::load(&path, &EngineOptions::default())?;
//! let mut session = engine.session()?;
//! let messages = [ChatMessage::text("user", "What's the weather in Paris?")];
//! let shape = CallShape {
//!     choice: ToolChoice::Required,
//!     ..CallShape::default()
//! };
//! let reply = session.call(&CallRequest::new(&messages, &tools, shape))?;
//! assert_eq!(reply.tool_calls[0].name, "get_weather");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This crate must not parse or validate on its own terms: it uses `toolgram-core`'s compiler,
//! parser and validator, so the grammar and the parser come from one declaration.

mod decode;
mod device;
mod engine;
mod error;
mod fetch;
mod grammar;
pub mod template;
mod tokens;

pub use decode::instrument;
pub(crate) use decode::{
    batch, call_bias, call_model, generate, loop_guard, prefix, sample, session, text_guard, think,
};
pub(crate) use device::{backend, threads};
pub use device::{gpu, rpc, speed};
pub use fetch::{hf, models};
pub use grammar::gbnf_check;
pub(crate) use grammar::{compiled_call, grammar_cache};
pub(crate) use tokens::{client_text, gguf_vocab, tokenizer};

pub use batch::{Batch, BatchStats};
pub use call_model::EngineModel;
pub use compiled_call::{CallShape, CompiledCall, GrammarStats, Grammars};
pub use engine::{
    ByteChecker, CompiledCheck, Engine, EngineOptions, check_lark, compile_over_bytes,
};
pub use error::EngineError;
pub use generate::{GenerateRequest, GenerateResponse};
pub use grammar::generation::{CompiledGeneration, UserGrammar, generation_grammar};
pub use loop_guard::CutCall;
pub use prefix::{PrefixStore, Stored};
pub use session::{
    AGENT_CALL_BIAS, AGENT_POOL, CallGrammar, CallRequest, CallResponse, DecodeObserver,
    FinishReason, ONE_TOOL_COUNT_BIAS, PLAN_CALL_BIAS, Sampling, Session, Timings, TruncatedCall,
    call_id, state_tag,
};
pub use text_guard::RepeatedText;
pub use threads::default_threads;

/// Unit tests that load a model run one at a time (the backend test sees every engine of
/// the process), each on its own engine: none is kept in a static.
#[cfg(test)]
pub(crate) fn test_engine(role: &str) -> (std::sync::MutexGuard<'static, ()>, Engine) {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let lock = ONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = models::find(role)
        .and_then(|m| m.fetch())
        .expect("model fetch");
    let engine = Engine::load(&path, &EngineOptions::default()).expect("model loads");
    (lock, engine)
}
