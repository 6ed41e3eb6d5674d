//! The call-or-text choice under `auto`: where the grammar lets a reply either open a call or
//! do something else (write text, plan 0 calls, end), the model's logits decide. This module
//! finds that step, measures the model's lean there ([`CallChoice::margin`]) and adds the
//! request's `call_bias` to the tokens that open a call, so declines can be traded against
//! calls by one calibrated number.
//!
//! - The tokens that open a call are found once per model ([`CallStarts`], `tokens/`).
//! - [`CallChoice`]: one reply's choice — the first step whose mask allows a call-starting
//!   token beside any other; later steps (a further call after one, a call after text) are
//!   left to the model. Under a plan the same step is the count: there the lean of more than
//!   one call against one is measured too ([`CallChoice::count_margin`]) and the request's
//!   `count_bias` added to the counts 2–9.
//!
//! This module must not change which tokens are allowed: the bias is added to logits and the
//! mask still decides (an infinite bias leaves only the call-starting tokens' logits finite,
//! for a reply already known to call); it must not allocate per step.

pub(crate) use crate::tokens::call_starts::CallStarts;
use llguidance::toktrie::SimpleVob;
use toolgram_core::compile::PLAN_PREFIX;

/// One reply's call-or-text choice: found at most once, biased and measured there.
#[derive(Debug)]
pub(crate) struct CallChoice<'s> {
    tokens: &'s [u32],
    /// The counts of more than one call (under a plan; empty otherwise).
    more: &'s [u32],
    /// Under a plan, the choice is the count right after the plan's prefix.
    planned: bool,
    bias: f32,
    /// Added to the counts of more than one call (`f32::INFINITY`: more than one for sure).
    count_bias: f32,
    /// Still looking for the choice.
    open: bool,
    /// The model's lean at the choice, before the bias: the best call-starting token's logit
    /// less the best other allowed token's (> 0: the model would call).
    pub(crate) margin: Option<f32>,
    /// Under a plan, the lean at its count, before the biases: the best count of more than
    /// one call less the logit of one (> 0: the model would plan several calls); `None` where
    /// the mask left no such choice.
    pub(crate) count_margin: Option<f32>,
}

impl<'s> CallChoice<'s> {
    /// The choice of a reply decoded under `plan` or not, with `bias` added to the
    /// call-starting tokens there and, under a plan, `count_bias` to its counts of more than
    /// one call.
    pub(crate) fn new(starts: &'s CallStarts, plan: bool, bias: f32, count_bias: f32) -> Self {
        Self {
            tokens: if plan { &starts.counts } else { &starts.opener },
            more: if plan { &starts.more } else { &[] },
            planned: plan,
            bias,
            count_bias,
            open: true,
            margin: None,
            count_margin: None,
        }
    }

    /// At the step whose mask is `mask` after the reply `text` so far: if this is the
    /// choice, record the margin and add the bias to `logits`. Every step after the first
    /// that allows a call-starting token is left alone.
    pub(crate) fn at_step(&mut self, mask: &SimpleVob, text: &[u8], logits: &mut [f32]) {
        if !self.open || (self.planned && !text.ends_with(PLAN_PREFIX.as_bytes())) {
            return;
        }
        let logit = |t: u32| logits.get(t as usize).copied().unwrap_or(f32::NEG_INFINITY);
        let mut starts_allowed = 0usize;
        let mut best_call = f32::NEG_INFINITY;
        for &t in self.tokens {
            if mask.is_allowed(t) {
                starts_allowed += 1;
                best_call = best_call.max(logit(t));
            }
        }
        if starts_allowed == 0 {
            return;
        }
        self.open = false;
        if mask.num_set() == starts_allowed {
            self.count(mask, logits);
            return; // a call is the only way on: no choice
        }
        let mut best_other = f32::NEG_INFINITY;
        mask.iter_set_entries(|t| {
            let t = t as u32;
            if !self.tokens.contains(&t) {
                best_other = best_other.max(logit(t));
            }
        });
        self.margin = Some(best_call - best_other);
        self.count(mask, logits);
        if self.bias == f32::INFINITY {
            // A call for sure: every other allowed token is out.
            let tokens = self.tokens;
            mask.iter_set_entries(|t| {
                if !tokens.contains(&(t as u32))
                    && let Some(l) = logits.get_mut(t)
                {
                    *l = f32::NEG_INFINITY;
                }
            });
        } else if self.bias != 0.0 {
            for &t in self.tokens {
                if let Some(l) = logits.get_mut(t as usize) {
                    *l += self.bias;
                }
            }
        }
    }

    /// A plan's count, one call or more: measure the lean ([`Self::count_margin`]) and add
    /// the count bias to the counts of more than one.
    fn count(&mut self, mask: &SimpleVob, logits: &mut [f32]) {
        let logit = |t: u32| logits.get(t as usize).copied().unwrap_or(f32::NEG_INFINITY);
        let (mut best_one, mut best_more) = (f32::NEG_INFINITY, f32::NEG_INFINITY);
        for &t in self.tokens.iter().filter(|&&t| mask.is_allowed(t)) {
            if self.more.contains(&t) {
                best_more = best_more.max(logit(t));
            } else {
                best_one = best_one.max(logit(t));
            }
        }
        if best_one == f32::NEG_INFINITY || best_more == f32::NEG_INFINITY {
            return; // one call, or only more: no choice between them
        }
        self.count_margin = Some(best_more - best_one);
        for &t in self.tokens {
            let more = self.more.contains(&t);
            if let Some(l) = logits.get_mut(t as usize) {
                if self.count_bias == f32::INFINITY && !more {
                    *l = f32::NEG_INFINITY;
                } else if more && self.count_bias != f32::INFINITY {
                    *l += self.count_bias;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgram_core::syntax;

    fn vocab() -> Vec<&'static [u8]> {
        vec![
            b"<tool_call>",
            b"Hello",
            b" {",
            b"0",
            b"1",
            b"23",
            b"<",
            b"<tool",
            b"```",
        ]
    }

    #[test]
    fn the_opener_and_its_spellings_start_a_call_and_counts_1_to_9_start_a_plan() {
        let hermes = syntax::by_name("hermes").expect("hermes");
        let spelled = CallStarts::find(vocab().into_iter(), |_| None, hermes);
        assert_eq!(spelled.opener, vec![0, 7], "text opener: its spellings");
        assert_eq!(spelled.counts, vec![4, 5]);
        let special = |t: &str| (t == "<tool_call>").then_some(0);
        let s = CallStarts::find(vocab().into_iter(), special, hermes);
        assert_eq!(
            s.opener,
            vec![0, 2],
            "special opener: that token alone (and bare `{{`, not a fence)"
        );
        let bare = syntax::by_name("llama3-json").expect("llama3-json");
        assert_eq!(
            CallStarts::find(vocab().into_iter(), |_| None, bare).opener,
            vec![2]
        );
    }

    fn mask(allowed: &[u32]) -> SimpleVob {
        let mut m = SimpleVob::alloc(9);
        for &t in allowed {
            m.allow_token(t);
        }
        m
    }

    #[test]
    fn the_first_step_allowing_a_call_and_something_else_is_measured_and_biased_once() {
        let hermes = syntax::by_name("hermes").expect("hermes");
        let starts = CallStarts::find(vocab().into_iter(), |_| None, hermes);
        let mut choice = CallChoice::new(&starts, false, 2.5, 0.0);
        let mut logits = vec![1.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5];
        choice.at_step(&mask(&[1, 2]), b"", &mut logits);
        assert_eq!(choice.margin, None, "no call allowed: not the choice");
        choice.at_step(&mask(&[0, 1, 7]), b"", &mut logits);
        assert_eq!(choice.margin, Some(-2.0));
        assert_eq!(logits[..2], [3.5, 3.0]);
        choice.at_step(&mask(&[0, 1]), b"Hi", &mut logits);
        assert_eq!(logits[0], 3.5, "later steps are left alone");
    }

    #[test]
    fn an_infinite_bias_leaves_only_the_counts_of_a_plan() {
        let hermes = syntax::by_name("hermes").expect("hermes");
        let starts = CallStarts::find(vocab().into_iter(), |_| None, hermes);
        let mut logits = vec![0.0, 0.0, 0.0, 5.0, 1.0, 0.5, 0.0, 0.0, 0.0];
        let mut planned = CallChoice::new(&starts, true, f32::INFINITY, 0.0);
        planned.at_step(&mask(&[3, 4, 5]), PLAN_PREFIX.as_bytes(), &mut logits);
        assert_eq!(planned.margin, Some(-4.0), "the lean is measured before");
        assert_eq!(logits[3], f32::NEG_INFINITY, "0 is out");
        assert_eq!(
            (logits[4], logits[5]),
            (1.0, 0.5),
            "the counts keep their logits"
        );
    }

    #[test]
    fn a_forced_call_is_no_choice_and_a_plan_chooses_at_its_count() {
        let hermes = syntax::by_name("hermes").expect("hermes");
        let starts = CallStarts::find(vocab().into_iter(), |_| None, hermes);
        let mut forced = CallChoice::new(&starts, false, 1.0, 0.0);
        let mut logits = vec![0.0; 8];
        forced.at_step(&mask(&[0]), b"", &mut logits);
        assert_eq!((forced.margin, logits[0]), (None, 0.0));
        let mut planned = CallChoice::new(&starts, true, -1.0, 0.0);
        let mut logits = vec![0.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0];
        planned.at_step(&mask(&[3, 4]), b"", &mut logits);
        assert_eq!(planned.margin, None, "before the plan's prefix");
        planned.at_step(&mask(&[3, 4]), PLAN_PREFIX.as_bytes(), &mut logits);
        assert_eq!(planned.margin, Some(-1.0));
        assert_eq!(logits[3..5], [2.0, 0.0]);
    }

    #[test]
    fn a_plans_count_measures_more_against_one_and_biases_more() {
        let hermes = syntax::by_name("hermes").expect("hermes");
        let starts = CallStarts::find(vocab().into_iter(), |_| None, hermes);
        assert_eq!(starts.more, vec![5], "`23` begins a count of more than one");
        let mut logits = vec![0.0, 0.0, 0.0, 5.0, 1.0, 0.5, 0.0, 0.0, 0.0];
        let mut biased = CallChoice::new(&starts, true, f32::INFINITY, 2.0);
        biased.at_step(&mask(&[3, 4, 5]), PLAN_PREFIX.as_bytes(), &mut logits);
        assert_eq!(biased.count_margin, Some(-0.5), "measured before the bias");
        assert_eq!((logits[4], logits[5]), (1.0, 2.5));
        let mut logits = vec![0.0, 0.0, 0.0, 5.0, 1.0, 0.5, 0.0, 0.0, 0.0];
        let mut sure = CallChoice::new(&starts, true, f32::INFINITY, f32::INFINITY);
        sure.at_step(&mask(&[3, 4, 5]), PLAN_PREFIX.as_bytes(), &mut logits);
        assert_eq!(
            (logits[4], logits[5]),
            (f32::NEG_INFINITY, 0.5),
            "one is out"
        );
        let mut logits = vec![0.0, 0.0, 0.0, 5.0, 1.0, 0.5, 0.0, 0.0, 0.0];
        let mut one_only = CallChoice::new(&starts, true, 0.0, 2.0);
        one_only.at_step(&mask(&[3, 4]), PLAN_PREFIX.as_bytes(), &mut logits);
        assert_eq!((one_only.count_margin, logits[4]), (None, 1.0), "no choice");
    }
}
