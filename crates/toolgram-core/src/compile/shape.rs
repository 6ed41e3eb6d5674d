//! A [`CallShape`] as the compiler reads it: the options a call grammar of that shape is
//! compiled with, and whether its reply opens with a plan line. This module must not compile.

use super::{CompileOptions, union};
use crate::define::request::CallShape;

impl CallShape {
    /// The options a call grammar of this shape is compiled with, `base` giving what the
    /// target's vocabulary and the compiler decide (special tokens, leniency, argument
    /// grammars).
    pub fn options(&self, base: &CompileOptions) -> CompileOptions {
        CompileOptions {
            mode: self.mode,
            think: self.think,
            max_calls: self.max_calls,
            plan: self.plan.is_on(),
            answer: self.answer.clone(),
            ..base.clone()
        }
    }

    /// Whether a reply under this shape opens with a plan line ([`super::CompiledGrammar::planned`]):
    /// a plan asked for where several calls of `tools` may be made in `syntax`, no response
    /// format beside them. A choice `tools` cannot meet plans nothing (compiling says why).
    pub fn plans(&self, tools: &crate::ToolSet, syntax: &crate::syntax::CallSyntax) -> bool {
        let callable = self.choice.callable(tools).unwrap_or_default();
        union::planned(
            &self.options(&CompileOptions::default()),
            self.parallel,
            syntax,
            &callable,
        )
        .is_some()
    }
}
