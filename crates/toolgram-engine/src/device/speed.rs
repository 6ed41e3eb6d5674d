//! How fast this machine runs this model, measured once where it is loaded: a prompt of
//! [`PROMPT_TOKENS`] tokens evaluated in batches and [`STEPS`] decode steps of one token each,
//! timed on a lane of the model's own context ([`crate::Session::measure_speed`]). A server
//! sizes its default deadline from it: what the machine can evaluate, not a constant.
//!
//! This module must not decide deadlines: it measures; the server decides.

/// Tokens of the measured prompt: a few batches, so the figure is the batched rate.
pub const PROMPT_TOKENS: usize = 256;

/// Decode steps measured after it.
pub const STEPS: usize = 8;

/// Tokens per second, measured on this machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Speed {
    /// Prompt tokens evaluated per second (in batches).
    pub prefill_per_s: f64,
    /// Tokens generated per second (one per step; no grammar, no sampling).
    pub decode_per_s: f64,
}

/// Tokens of context at which evaluating a prompt takes twice what the short measured prompt
/// predicts per token (attention grows with the context). Measured: Claude Code's first turn,
/// 18.9k tokens evaluated, took about 3.8× what the 256-token rate predicts (inferred from
/// the run's 334.6 s for two requests, the second cached; the rate read on another start) (the default model, 2 CPU cores,
/// 2026-11-29), i.e. 1 + 18.9k / 6.8k.
pub const ATTENTION_DOUBLES_AT: f64 = 6000.0;

impl Speed {
    /// Seconds to evaluate `prompt` tokens and then generate `reply` tokens, at these rates,
    /// the prompt's per-token time growing with its length ([`ATTENTION_DOUBLES_AT`]).
    pub fn seconds_for(&self, prompt: usize, reply: usize) -> f64 {
        let n = prompt as f64;
        n / self.prefill_per_s.max(1e-3) * (1.0 + n / ATTENTION_DOUBLES_AT)
            + reply as f64 / self.decode_per_s.max(1e-3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_slows_as_it_grows_and_the_reply_counts_once() {
        let s = Speed {
            prefill_per_s: 100.0,
            decode_per_s: 10.0,
        };
        assert_eq!(s.seconds_for(6000, 50), 120.0 + 5.0);
        assert_eq!(s.seconds_for(0, 50), 5.0);
    }
}
