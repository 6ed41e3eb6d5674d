//! Free generation under any grammar, not only tool calls: a session decodes a reply under a
//! user grammar compiled once ([`crate::CompiledGeneration`], `grammar/generation.rs`),
//! optionally after a `<think>` block. This module must not compile or edit the grammar.

use crate::error::EngineError;
use crate::grammar::generation::CompiledGeneration;
use crate::session::{Draw, FinishReason, Levers, Sampling, Session, Timings};
use crate::think::ThinkWatch;
use std::time::Instant;
use toolgram_core::define::request::Think;
use toolgram_core::syntax::Reasoning;
use toolgram_core::{ChatMessage, ToolSet, parse};

/// A free-generation request.
pub struct GenerateRequest<'a> {
    /// The conversation (usually one user message).
    pub messages: &'a [ChatMessage],
    /// The grammar the reply must match, compiled with its think setting.
    pub grammar: &'a CompiledGeneration,
    /// Sampling settings.
    pub sampling: Sampling,
}

/// The generated text.
#[derive(Debug, Clone)]
pub struct GenerateResponse {
    /// The reasoning block's text, when thinking was on and the model wrote one.
    pub reasoning_content: Option<String>,
    /// The text matching the grammar, exactly as generated.
    pub content: String,
    /// `stop` when the grammar was complete, `length` at the token limit.
    pub finish_reason: FinishReason,
    /// Prompt length in tokens.
    pub prompt_tokens: usize,
    /// Generated tokens.
    pub completion_tokens: usize,
    /// Measurements.
    pub timings: Timings,
}

impl Session<'_> {
    /// Generate text constrained by a user grammar.
    pub fn generate_text(
        &mut self,
        req: &GenerateRequest<'_>,
    ) -> Result<GenerateResponse, EngineError> {
        let out = self.generate_on_lane(req);
        self.pause();
        out
    }

    fn generate_on_lane(
        &mut self,
        req: &GenerateRequest<'_>,
    ) -> Result<GenerateResponse, EngineError> {
        let engine = self.engine();
        let think = req.grammar.think();
        let no_tools = ToolSet::new(Vec::new())?;
        let t_grammar = Instant::now();
        let matcher = req.grammar.matcher()?;
        let grammar_ms = t_grammar.elapsed().as_secs_f64() * 1e3;
        let t_template = Instant::now();
        let tokens = engine.prompt(req.messages, &no_tools)?;
        let n_ctx = engine.n_ctx as usize;
        if tokens.len() >= n_ctx {
            return Err(EngineError::ContextOverflow {
                prompt_tokens: tokens.len(),
                n_ctx,
            });
        }
        let mut timings = Timings {
            grammar_ms,
            template_ms: t_template.elapsed().as_secs_f64() * 1e3,
            ..Timings::default()
        };
        self.prefill_timed(&tokens, 0, &mut timings)?;
        let budget = req.sampling.max_tokens.min(n_ctx - tokens.len());
        let watch = (think != Think::Off).then(|| {
            ThinkWatch::new(
                req.sampling
                    .think_budget
                    .unwrap_or(req.sampling.max_tokens * 3 / 4),
                Reasoning::THINK,
            )
        });
        let t1 = Instant::now();
        // Text under a user grammar is the user's: never stopped for repeating itself.
        let sampling = Sampling {
            stop_repeated_text: false,
            ..req.sampling.clone()
        };
        let outcome = self.generate(
            Some(matcher),
            Draw {
                sampling: &sampling,
                levers: Levers::NONE,
            },
            watch,
            None,
            budget,
            &mut timings,
        );
        timings.generate_ms = t1.elapsed().as_secs_f64() * 1e3;
        // Free text may stop at the token limit before the grammar is complete: that is a
        // reply with finish_reason `length` (the text so far), not an error.
        let (completion_tokens, hit_limit) = match outcome {
            Err(EngineError::Truncated { max_tokens, .. }) => (max_tokens, true),
            other => other?,
        };
        let raw = String::from_utf8_lossy(&self.text).into_owned();
        let (reasoning_content, answer) = parse::split_reasoning(&raw, think, Reasoning::THINK);
        let content = match reasoning_content {
            Some(_) => answer.trim_start_matches([' ', '\n']).to_owned(),
            None => answer.to_owned(),
        };
        Ok(GenerateResponse {
            reasoning_content,
            content,
            finish_reason: if hit_limit {
                FinishReason::Length
            } else {
                FinishReason::Stop
            },
            prompt_tokens: tokens.len(),
            completion_tokens,
            timings,
        })
    }
}
