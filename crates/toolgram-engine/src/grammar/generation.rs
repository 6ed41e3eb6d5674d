//! A user's grammar for free generation (a response format alone, `toolgram generate`): a
//! Lark grammar, GBNF read into Lark, or a JSON Schema, run unchanged as an llguidance
//! sub-grammar (`@user`) below our optional think wrapper, compiled once per request for the
//! model's vocabulary. This module must not edit or re-interpret the grammar text, or decode.

use crate::error::EngineError;
use llguidance::Matcher;
use llguidance::api::{GrammarWithLexer, TopLevelGrammar};
use serde_json::Value;
use std::sync::Mutex;
use toolgram_core::compile::{CompileOptions, around_answer};
use toolgram_core::define::request::Think;

/// The grammar free generation runs under.
#[derive(Debug, Clone)]
pub enum UserGrammar {
    /// Lark text (llguidance dialect; GBNF is read into it by `toolgram-core`).
    Lark(String),
    /// A JSON Schema.
    JsonSchema(Value),
}

/// The whole llguidance grammar for a user grammar and a think setting: the user's grammar
/// alone when thinking is off, else `start: think? @user` with the grammar as `user`.
pub fn generation_grammar(
    user: &UserGrammar,
    think: Think,
    special_tokens: &CompileOptions,
) -> TopLevelGrammar {
    let mut inner = match user {
        UserGrammar::Lark(text) => GrammarWithLexer::from_lark(text.clone()),
        UserGrammar::JsonSchema(schema) => GrammarWithLexer::from_json_schema(schema.clone()),
    };
    if think == Think::Off {
        return TopLevelGrammar::from_grammar(inner);
    }
    inner.name = Some("user".to_owned());
    let opts = CompileOptions {
        think,
        ..special_tokens.clone()
    };
    let top = around_answer(&opts, "user");
    TopLevelGrammar {
        grammars: vec![GrammarWithLexer::from_lark(top), inner],
        max_tokens: None,
    }
}

/// A user grammar (with its think setting) compiled once for the model's vocabulary
/// ([`crate::Grammars::compile_generation`]): each attempt decodes under a deep clone of its
/// start state, so a request's check compiles it and its run never does.
pub struct CompiledGeneration {
    think: Think,
    fresh: Mutex<Matcher>,
    compile_ms: f64,
}

impl CompiledGeneration {
    pub(crate) fn new(think: Think, matcher: Matcher, compile_ms: f64) -> Self {
        Self {
            think,
            fresh: Mutex::new(matcher),
            compile_ms,
        }
    }

    /// The think setting it was compiled with.
    pub fn think(&self) -> Think {
        self.think
    }

    /// What compiling it took.
    pub fn compile_ms(&self) -> f64 {
        self.compile_ms
    }

    /// A matcher in the grammar's start state.
    pub(crate) fn matcher(&self) -> Result<Matcher, EngineError> {
        self.fresh
            .lock()
            .map(|m| m.deep_clone())
            .map_err(|_| EngineError::Grammar("a compiled grammar's lock was poisoned".into()))
    }
}

impl std::fmt::Debug for CompiledGeneration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledGeneration")
            .field("think", &self.think)
            .finish_non_exhaustive()
    }
}
