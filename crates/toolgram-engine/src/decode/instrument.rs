//! Measurement hooks for benchmarks (`toolgram-eval`'s `bench`): [`Engine::mask_times`] times
//! the mask per token of toolgram's constraint (llguidance) against llama.cpp's own GBNF
//! grammar sampler, on the same model vocabulary, the same token sequence and the same tool
//! pool compiled for each (Lark for llguidance, our GBNF for llama.cpp). Per-call timings of
//! ordinary calls are [`crate::Timings`].
//!
//! Measurement only: nothing here decides a test or changes how the engine decodes.

use crate::engine::Engine;
use crate::error::EngineError;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llguidance::api::TopLevelGrammar;
use std::time::Instant;

/// Per-token times in microseconds, in token order.
#[derive(Debug, Default)]
pub struct MaskTimes {
    /// llguidance `compute_mask` over the whole vocabulary.
    pub llguidance_us: Vec<f64>,
    /// llama.cpp's grammar sampler applied to every vocabulary entry.
    pub llama_cpp_us: Vec<f64>,
    /// Tokens in the replayed text.
    pub tokens: usize,
}

impl Engine {
    /// Replay `text` token by token under both constraints and time each mask. `lark` and
    /// `gbnf` must both accept `text`; a token either refuses is an error (never forced into
    /// llama.cpp's grammar, which aborts on tokens it does not allow).
    pub fn mask_times(&self, lark: &str, gbnf: &str, text: &str) -> Result<MaskTimes, EngineError> {
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(text.as_bytes(), false, true);
        let mut out = MaskTimes {
            tokens: tokens.len(),
            ..MaskTimes::default()
        };
        let mut m = self
            .grammars
            .parser(TopLevelGrammar::from_lark(lark.to_owned()))?;
        let refused = |who: &str, i: usize| {
            EngineError::Constraint(format!("{who} refuses token {i} of the replayed text"))
        };
        for (i, t) in tokens.iter().enumerate() {
            let t0 = Instant::now();
            let mask = m
                .compute_mask()
                .map_err(|e| EngineError::Constraint(e.to_string()))?;
            out.llguidance_us.push(t0.elapsed().as_secs_f64() * 1e6);
            let id = t.0 as u32;
            if !mask.is_allowed(id) {
                return Err(refused("llguidance", i));
            }
            m.consume_token(id)
                .map_err(|e| EngineError::Constraint(e.to_string()))?;
        }
        let mut sampler = LlamaSampler::grammar(&self.model, gbnf, "root")
            .map_err(|e| EngineError::Grammar(format!("llama.cpp refused the GBNF: {e}")))?;
        let all: Vec<LlamaTokenData> = (0..vocab.n_tokens())
            .map(|i| LlamaTokenData::new(llama_cpp_2::token::LlamaToken::new(i), 0.0, 0.0))
            .collect();
        for (i, t) in tokens.iter().enumerate() {
            let mut arr = LlamaTokenDataArray::new(all.clone(), false);
            let t0 = Instant::now();
            sampler.apply(&mut arr);
            out.llama_cpp_us.push(t0.elapsed().as_secs_f64() * 1e6);
            let allowed = arr
                .data
                .iter()
                .any(|d| d.id() == *t && d.logit().is_finite());
            if !allowed {
                return Err(refused("llama.cpp's grammar", i));
            }
            sampler.accept(*t);
        }
        Ok(out)
    }
}
