//! Sampling settings and the levers' defaults: how a reply is drawn (temperature, nucleus,
//! seed, stops, logit bias, token limit) and the call and count biases in force for a pool.
//! Plain settings: this module must not decode.

use toolgram_core::define::request::Plan;

/// Sampling settings.
#[derive(Debug, Clone)]
pub struct Sampling {
    /// Most tokens to generate.
    pub max_tokens: usize,
    /// 0 = greedy.
    pub temperature: f32,
    /// Nucleus sampling: only the most likely allowed tokens whose probabilities add up to
    /// this are drawn from (1 = all).
    pub top_p: f32,
    /// Seed for temperature sampling; `None` = from the clock.
    pub seed: Option<u64>,
    /// Stop sequences: the reply ends right after one of them is generated where the grammar
    /// may end (never inside a call); the sequence itself is not part of the text.
    pub stop: Vec<String>,
    /// Added to logits before the mask (OpenAI `logit_bias`).
    pub logit_bias: Vec<(u32, f32)>,
    /// Generate without any constraint: no grammar mask at all, the reply parsed afterwards
    /// (and refused if it is not a valid call). For comparing constrained decoding against
    /// free decoding on the same model and prompt (`toolgram bench call`); tool choice is
    /// ignored.
    pub unconstrained: bool,
    /// Sample every token, forced ones included, instead of appending forced tokens in one
    /// batch — for checking that fast-forward changes nothing but speed (`toolgram bench
    /// e2e`).
    pub no_fast_forward: bool,
    /// Most tokens of an open `<think>` block before its closing marker is forced in;
    /// `None` = three quarters of `max_tokens`.
    pub think_budget: Option<usize>,
    /// Cut a runaway call from a reply that may hold several (a repeat of an earlier call of
    /// the reply, or a counter of numbers the conversation never wrote) and end the reply
    /// before it; off, only a repeat ends the reply, and it stays (see `loop_guard`). The run
    /// stage also turns it on for a request that forbids repeats.
    pub cut_runaways: bool,
    /// Stop a constrained reply whose free text repeats itself verbatim (one span written
    /// four times or more in a row, 128 tokens of it repeated) at the first step where the
    /// grammar may end it, keeping what was written; where the grammar cannot end it (a call
    /// whose arguments loop), past a higher bar it ends as at the token limit (see
    /// `text_guard`). On by default.
    pub stop_repeated_text: bool,
    /// Added to the logits of the tokens that open a call at the reply's call-or-text choice
    /// (under `auto`; under [`Plan::Count`], to the counts 1–9): > 0 calls more often, < 0
    /// declines more often (see `call_bias`); `None`: [`Self::call_bias_for`]'s default.
    pub call_bias: Option<f32>,
    /// Added to a plan's counts of more than one call against one, at its count (> 0:
    /// several calls more often); `None`: [`Self::count_bias_for`]'s default.
    pub count_bias: Option<f32>,
}

/// The call bias of a planned reply when the request names none: measured on BFCL (docs/eval.md,
/// "Call or text"), asked "how many calls", the default model names 0 almost never, and a
/// bias of -2 on the counts 1–9 wins back most declines at no measured cost to calls.
pub const PLAN_CALL_BIAS: f32 = -2.0;

/// Tools offered from which a pool counts as an agent's ([`AGENT_CALL_BIAS`]). BFCL's
/// non-live categories offer 1 to 4; coding agents send tens (`serve`'s `MAX_TOOLS` note).
pub const AGENT_POOL: usize = 8;

/// The call bias of a request offering an agent's pool ([`AGENT_POOL`] tools or more) when it
/// names none: an agent's user asks for actions, and a coding model asked for a file leans to
/// writing it as text — Claude Code's first turn on the default model by 3.8 logits, which
/// +4 tips to its `Write` call (docs/clients.md, docs/eval.md "Right by default").
pub const AGENT_CALL_BIAS: f32 = 4.0;

/// The count bias of a plan over a pool of one tool when the request names none. Measured on
/// BFCL (docs/eval.md, "The count"), the default model's count undercounts the calls of one
/// tool (BFCL's `parallel`: 34 % right at 0 on a sample, 51.0 at +1.5 on BFCL's own harness)
/// at little cost to one call (`simple` on the sample: 54.0 → 52.0), while over several tools
/// it already leans to more calls than are due (`multiple`, one call due: 74 % at 0, 62 % at
/// +1): there it stays 0. A second decode it causes that repeats a call or runs out of tokens
/// gives way to the reply of one call (`Session::decide_then_plan`).
pub const ONE_TOOL_COUNT_BIAS: f32 = 1.5;

impl Sampling {
    /// The count bias in force for a pool of `tools` tools under `plan`: the request's; else
    /// [`ONE_TOOL_COUNT_BIAS`] for one tool under [`Plan::Calls`] (where the count comes after
    /// call or text is decided; under [`Plan::Count`] a bias on 2–9 would also move that
    /// choice, which [`PLAN_CALL_BIAS`] was measured without); else 0.
    pub fn count_bias_for(&self, tools: usize, plan: Plan) -> f32 {
        self.count_bias
            .unwrap_or(if tools == 1 && plan == Plan::Calls {
                ONE_TOOL_COUNT_BIAS
            } else {
                0.0
            })
    }

    /// Whether [`ONE_TOOL_COUNT_BIAS`] is in force (the request names no count bias): then a
    /// count of several whose reply repeats a call or runs out of tokens gives way to one call.
    pub fn counts_up_by_default(&self, tools: usize, plan: Plan) -> bool {
        self.count_bias.is_none() && self.count_bias_for(tools, plan) > 0.0
    }

    /// The call bias in force for a pool of `tools` tools under `plan`: the request's; else
    /// [`PLAN_CALL_BIAS`] where the count chooses ([`Plan::Count`]); else [`AGENT_CALL_BIAS`]
    /// for an agent's pool; else 0.
    pub fn call_bias_for(&self, tools: usize, plan: Plan) -> f32 {
        match self.call_bias {
            Some(b) => b,
            None if plan == Plan::Count => PLAN_CALL_BIAS,
            None if tools >= AGENT_POOL => AGENT_CALL_BIAS,
            None => 0.0,
        }
    }
}

/// What one decode of a reply is under, settled for its pool: whether it opens with a plan
/// line, and the biases at its call-or-text choice and at its count — the request's levers
/// ([`Levers::settled`]), or a plan step's own (`session::plan`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Levers {
    pub plan: Plan,
    pub call_bias: f32,
    pub count_bias: f32,
}

/// How one decode draws its tokens: the request's sampling and that decode's levers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Draw<'a> {
    pub sampling: &'a Sampling,
    pub levers: Levers,
}

impl Levers {
    /// No plan, no bias: a decode without a call-or-text choice (`toolgram generate`).
    pub(crate) const NONE: Self = Self {
        plan: Plan::Off,
        call_bias: 0.0,
        count_bias: 0.0,
    };

    /// `sampling`'s levers for a pool of `tools` tools decoded under `plan`.
    pub(crate) fn settled(sampling: &Sampling, tools: usize, plan: Plan) -> Self {
        Self {
            plan,
            call_bias: sampling.call_bias_for(tools, plan),
            count_bias: sampling.count_bias_for(tools, plan),
        }
    }
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            max_tokens: 512,
            temperature: 0.0,
            top_p: 1.0,
            seed: None,
            stop: Vec::new(),
            logit_bias: Vec::new(),
            unconstrained: false,
            no_fast_forward: false,
            think_budget: None,
            cut_runaways: false,
            stop_repeated_text: true,
            call_bias: None,
            count_bias: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_pool_gets_its_call_bias_unless_the_request_or_the_count_names_one() {
        let s = Sampling::default();
        assert_eq!(s.call_bias_for(AGENT_POOL - 1, Plan::Off), 0.0);
        assert_eq!(s.call_bias_for(AGENT_POOL, Plan::Off), AGENT_CALL_BIAS);
        let named = Sampling {
            call_bias: Some(-1.0),
            ..Sampling::default()
        };
        assert_eq!(named.call_bias_for(40, Plan::Count), -1.0);
        assert_eq!(s.call_bias_for(40, Plan::Count), PLAN_CALL_BIAS);
        assert_eq!(s.call_bias_for(1, Plan::Count), PLAN_CALL_BIAS);
        assert_eq!(s.call_bias_for(40, Plan::Calls), AGENT_CALL_BIAS);
    }

    #[test]
    fn a_pool_of_one_tool_gets_its_count_bias_unless_the_request_names_one() {
        let s = Sampling::default();
        assert_eq!(s.count_bias_for(1, Plan::Calls), ONE_TOOL_COUNT_BIAS);
        assert_eq!(s.count_bias_for(2, Plan::Calls), 0.0);
        assert_eq!(
            s.count_bias_for(1, Plan::Count),
            0.0,
            "the count chooses call or text"
        );
        let named = Sampling {
            count_bias: Some(-0.5),
            ..Sampling::default()
        };
        assert_eq!(named.count_bias_for(1, Plan::Calls), -0.5);
        assert!(s.counts_up_by_default(1, Plan::Calls));
        assert!(!named.counts_up_by_default(1, Plan::Calls));
    }
}
