//! The one construction of the call union, for every target: an IR skeleton — optional
//! reasoning block, free text, the calls section in the model's syntax, one call rule per
//! callable tool whose literal name selects that tool's arguments — plus named *slots* for
//! what each target spells its own way (argument grammars, free text, the reasoning text).
//!
//! The writers ([`super::lark`] for llguidance, [`super::ir`] for GBNF and OpenAI Lark) fill
//! the slots; this module must not spell any target or compile an argument schema.

use super::slots::{Slot, Target, Text, Union, marker};
use super::{bodies, harmony};
use crate::define::request::Think;
use crate::define::tool::{ToolChoice, ToolSet};
use crate::error::CompileError;
use crate::syntax::{CallBody, CallSyntax, JSON_FENCE, Piece, Reasoning};
use toolgram_grammar::{Expr, Grammar, Rule};

/// Build the union for a request.
pub(crate) fn build(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
    syntax: &CallSyntax,
    opts: &super::CompileOptions,
    target: Target,
) -> Result<Union, CompileError> {
    let think = opts.think;
    let callable = choice.callable(tools)?;
    let mut u = Union {
        grammar: Grammar::default(),
        slots: Vec::new(),
        callable: callable.clone(),
        deferred: Vec::new(),
    };
    let opener_is_token = matches!(syntax.first_piece(), Some(Piece::Token(t)) if target.special_tokens.contains_key(t));
    let bare = opener_is_token && syntax.bare_calls && !callable.is_empty();
    let opener = syntax.opener();
    let text = |u: &mut Union, t: Text| Expr::opt(u.slot("text", Slot::Text(t)));
    let calls = Expr::rule("calls");
    let answer = if syntax.body == CallBody::Harmony {
        let final_message = harmony::final_message(&mut u, target);
        if callable.is_empty() {
            final_message
        } else if choice.requires_call() {
            calls
        } else {
            Expr::alt(vec![final_message, calls])
        }
    } else if opts.answer.is_some() && syntax.prompt_opens.is_none() {
        // A response format beside the tools: the answer in its schema (the text slot, which
        // the writer fills with the schema) or calls, one or the other.
        let mut answer = || u.slot("text", Slot::Text(Text::Any));
        if callable.is_empty() {
            answer()
        } else if choice.requires_call() {
            calls
        } else {
            Expr::alt(vec![answer(), calls])
        }
    } else if let Some(most) = planned(opts, parallel, syntax, &callable) {
        // Plan, then calls: the count first, then exactly that many calls (none: text).
        let mut counts: Vec<Expr> = (1..=most)
            .map(|k| {
                Expr::seq(vec![
                    Expr::lit(format!("{k}\n")),
                    Expr::rule(format!("calls-{k}")),
                ])
            })
            .collect();
        if !choice.requires_call() {
            // No calls planned: text, which under the bare-call rule must not read as one.
            let none = if bare { not_a_bare_call() } else { Text::Any };
            counts.insert(0, Expr::seq(vec![Expr::lit("0\n"), text(&mut u, none)]));
        }
        Expr::seq(vec![Expr::lit(super::PLAN_PREFIX), Expr::alt(counts)])
    } else if callable.is_empty() {
        text(&mut u, Text::Any)
    } else if let Some(header) = syntax.prompt_opens {
        // The prompt wrote the first call's opener: the reply goes on with a call's body,
        // or with the text recipient's header and text (calls after it on targets whose
        // text may run up to an opener).
        let opened = Expr::rule("opened-calls");
        if choice.requires_call() {
            opened
        } else {
            let prose = text(&mut u, Text::NotContaining(opener));
            let mut answer = vec![Expr::lit(header), prose];
            if !target.lexed {
                answer.push(Expr::opt(calls));
            }
            Expr::alt(vec![Expr::seq(answer), opened])
        }
    } else if choice.requires_call() {
        calls
    } else if bare {
        Expr::alt(vec![
            Expr::seq(vec![text(&mut u, not_a_bare_call()), Expr::opt(calls)]),
            Expr::rule("bare-calls"),
        ])
    } else if opener_is_token {
        Expr::seq(vec![text(&mut u, Text::Any), Expr::opt(calls)])
    } else if opener.is_empty() || target.lexed {
        let words = vec![if opener.is_empty() {
            "{".into()
        } else {
            opener
        }];
        let prose = Text::NotStarting {
            words,
            after_ws: false,
        };
        Expr::alt(vec![text(&mut u, prose), calls])
    } else {
        let prose = u.slot("text", Slot::Text(Text::NotContaining(opener)));
        Expr::seq(vec![prose, Expr::opt(calls)])
    };
    u.grammar.rules = think_root(think, syntax.reasoning(), target, answer, &mut u);
    if !callable.is_empty() {
        // Calls after the first: as many as the bound leaves (none when one call at most).
        let more = match (parallel, opts.max_calls) {
            (false, _) => Some(0),
            (true, max) => max.map(|m| m.saturating_sub(1)),
        };
        let plan = planned(opts, parallel, syntax, &callable);
        u.calls(tools, (more, plan), syntax, target, bare)?;
    }
    Ok(u)
}

/// Text that cannot be read as a bare call (Qwen's rule: a reply opening with `{` or a
/// ```` ```json ```` fence is a call).
fn not_a_bare_call() -> Text {
    Text::NotStarting {
        words: vec!["{".into(), "```json".into()],
        after_ws: true,
    }
}

/// The most calls a plan may name, where the reply is planned: several calls allowed, a
/// syntax whose calls sit in a plain section (not Harmony's messages, not one the prompt
/// opens, and no response format beside the tools).
pub(crate) fn planned(
    opts: &super::CompileOptions,
    parallel: bool,
    syntax: &CallSyntax,
    callable: &[usize],
) -> Option<usize> {
    let plain = syntax.body != CallBody::Harmony && syntax.prompt_opens.is_none();
    let most = opts.max_calls.unwrap_or(super::PLAN_MAX_CALLS);
    (opts.plan && parallel && plain && opts.answer.is_none() && !callable.is_empty() && most > 1)
        .then_some(most.min(super::PLAN_MAX_CALLS))
}

/// A union with no calls: the reasoning block (per `think`) around a caller's answer slot.
pub(crate) fn around_answer(think: Think, target: Target) -> Union {
    let mut u = Union {
        grammar: Grammar::default(),
        slots: Vec::new(),
        callable: Vec::new(),
        deferred: Vec::new(),
    };
    let answer = u.slot("answer", Slot::Answer);
    u.grammar.rules = think_root(think, Reasoning::THINK, target, answer, &mut u);
    u
}

/// The start rule: the answer, after a reasoning block when `think` asks for one (up to
/// four spaces/newlines may follow the block).
fn think_root(
    think: Think,
    reasoning: Reasoning,
    target: Target,
    answer: Expr,
    u: &mut Union,
) -> Vec<Rule> {
    let mut block = || {
        let body = u.slot("think-body", Slot::ThinkBody(reasoning));
        Expr::seq(vec![
            marker(reasoning.open, target),
            body,
            Expr::repeat(Expr::class(&[(' ', ' '), ('\n', '\n')]), 0, Some(4)),
        ])
    };
    let root = match think {
        Think::Off => answer,
        Think::Optional => Expr::alt(vec![Expr::seq(vec![block(), answer.clone()]), answer]),
        Think::Required => Expr::seq(vec![block(), answer]),
    };
    vec![Rule {
        name: "root".into(),
        expr: root,
    }]
}

impl Union {
    /// The calls section, one rule per callable tool, and (for bare-call syntaxes) the bare
    /// form a model writes without the opener.
    #[allow(
        clippy::too_many_lines,
        reason = "the call union's forms, one arm each, read best side by side"
    )]
    fn calls(
        &mut self,
        tools: &ToolSet,
        (more_calls, plan): (Option<usize>, Option<usize>),
        syntax: &CallSyntax,
        target: Target,
        bare: bool,
    ) -> Result<(), CompileError> {
        // Templates differ in the gap between calls: a separator of whitespace is
        // optional, and a newline may stand between calls of the non-JSON bodies.
        let sep_text = crate::syntax::text_of(syntax.separator);
        let sep = match syntax.body {
            _ if !sep_text.trim().is_empty() => marker(syntax.separator, target),
            _ if !sep_text.is_empty() => Expr::opt(marker(syntax.separator, target)),
            CallBody::Json => Expr::Seq(Vec::new()),
            _ => Expr::opt(Expr::lit("\n")),
        };
        let max = more_calls.map(|m| u32::try_from(m).unwrap_or(u32::MAX));
        let more =
            |call: &str| Expr::repeat(Expr::seq(vec![sep.clone(), Expr::rule(call)]), 0, max);
        if syntax.body == CallBody::Harmony {
            // Each call is a message ending in `<|call|>`, which ends the generation of
            // the model the syntax is for: required between calls, optional after the last.
            let close = marker(syntax.call_close, target);
            let next = Expr::seq(vec![close.clone(), marker(syntax.separator, target)]);
            let more = Expr::repeat(Expr::seq(vec![next, Expr::rule("call")]), 0, max);
            let section = Expr::seq(vec![Expr::rule("call"), more, Expr::opt(close)]);
            self.rule("calls", section);
            let callable = self.callable.clone();
            let alts = callable.iter().map(|i| Expr::rule(format!("call-{i}")));
            self.rule("call", Expr::alt(alts.collect()));
            for &i in &callable {
                let call = bodies::call_body(self, tools, i, syntax, target);
                self.rule(&format!("call-{i}"), call);
            }
            return Ok(());
        }
        let mut section = vec![
            marker(syntax.section_open, target),
            bodies::after_section_open(syntax),
            Expr::rule("call"),
            more("call"),
            bodies::before_section_close(syntax),
            match syntax.section_close_optional {
                true => Expr::opt(marker(syntax.section_close, target)),
                false => marker(syntax.section_close, target),
            },
        ];
        if syntax.section_close.is_empty() {
            // The last call may be followed by a newline, as bare calls may (below): else
            // a token holding the call's end and a newline (`}}\n`) would be read as the
            // separator, and another call forced. Calls with a closing marker too: after
            // Qwen's `</tool_call>` the default model writes `\n` (p = 1.0) and then ends
            // (p = 0.999, measured with llama-server's token probabilities on 20 BFCL
            // parallel items); a grammar that reads that `\n` only as the separator forces
            // a second call, then a third — the runaways of `tool_choice: required`.
            section.push(Expr::opt(Expr::lit("\n")));
        }
        // A plan's `calls-K`: the same section with exactly K calls.
        for k in 1..=plan.unwrap_or(0) {
            let mut exact = section.clone();
            let n = u32::try_from(k - 1).unwrap_or(0);
            exact[3] = Expr::repeat(Expr::seq(vec![sep.clone(), Expr::rule("call")]), n, Some(n));
            self.rule(&format!("calls-{k}"), Expr::Seq(exact));
        }
        let section = Expr::Seq(section);
        self.rule("calls", section);
        let callable = self.callable.clone();
        let alts = callable.iter().map(|i| Expr::rule(format!("call-{i}")));
        self.rule("call", Expr::alt(alts.collect()));
        for &i in &callable {
            let mut body = bodies::call_body(self, tools, i, syntax, target);
            if bare || syntax.prompt_opens.is_some() {
                // The bare form spelled as inside the markers shares the body's rule.
                self.rule(&format!("body-{i}"), body);
                body = Expr::rule(format!("body-{i}"));
            }
            let call = Expr::seq(vec![
                marker(syntax.call_open, target),
                body,
                marker(syntax.call_close, target),
            ]);
            self.rule(&format!("call-{i}"), call);
        }
        if syntax.prompt_opens.is_some() {
            // The first call's opener is the prompt's; the calls after it are whole.
            let first = callable.iter().map(|i| Expr::rule(format!("body-{i}")));
            let opened = vec![
                Expr::alt(first.collect()),
                more("call"),
                Expr::opt(Expr::lit("\n")),
            ];
            self.rule("opened-calls", Expr::Seq(opened));
        }
        if !bare {
            return Ok(());
        }
        let fenced = Expr::seq(vec![
            Expr::lit(JSON_FENCE.0),
            Expr::rule("bare-list"),
            Expr::lit(JSON_FENCE.1),
        ]);
        // A newline may follow the last call: BPE merges it into the call's last token
        // (Qwen's `}}\n`), and a grammar without it reads that token as the separator and
        // forbids the end there, so the model must write another call — the loop of
        // identical calls a small model then cannot leave.
        let calls = Expr::alt(vec![Expr::rule("bare-list"), fenced]);
        self.rule(
            "bare-calls",
            Expr::seq(vec![calls, Expr::opt(Expr::lit("\n"))]),
        );
        let list = Expr::seq(vec![Expr::rule("bare-call"), more("bare-call")]);
        self.rule("bare-list", list);
        let alts = callable
            .iter()
            .map(|i| Expr::rule(format!("bare-call-{i}")));
        self.rule("bare-call", Expr::alt(alts.collect()));
        let ws = |min| {
            Expr::repeat(
                Expr::class(&[(' ', ' '), ('\t', '\n'), ('\r', '\r')]),
                min,
                Some(16),
            )
        };
        for &i in &callable {
            let name = crate::syntax::pyjson::to_string(&tools.tools()[i].name, None);
            let args = self.slot(
                &format!("bare-args-{i}"),
                Slot::Args {
                    tool: i,
                    loose: true,
                    again: true,
                },
            );
            let mut items = vec![Expr::lit("{"), ws(1)];
            for (k, part) in [
                Expr::lit("\"name\""),
                Expr::lit(":"),
                Expr::lit(name),
                Expr::lit(","),
                Expr::lit(format!("\"{}\"", syntax.args_key)),
                Expr::lit(":"),
                args,
                Expr::lit("}"),
            ]
            .into_iter()
            .enumerate()
            {
                if k > 0 {
                    items.push(ws(0));
                }
                items.push(part);
            }
            // `{"` goes on exactly as `json.dumps` spells the call (most of it forced);
            // `{` and whitespace, as an indented object, with any spacing.
            let spaced = Expr::Seq(items);
            let call = Expr::alt(vec![Expr::rule(format!("body-{i}")), spaced]);
            self.rule(&format!("bare-call-{i}"), call);
        }
        Ok(())
    }
}
