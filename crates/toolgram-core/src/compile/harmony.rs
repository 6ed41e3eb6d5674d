//! Harmony (GPT-OSS) messages as IR for the call union: a call is a message to
//! `functions.NAME` on the commentary channel whose text is the JSON arguments; an answer is
//! a message on the final channel. A call's header is accepted in both spellings found in
//! the wild — the model's (`<|channel|>commentary to=functions.NAME <|constrain|>json
//! <|message|>`) and the chat template's (` to=functions.NAME<|channel|>commentary json
//! <|message|>`) — each with its content type optional.
//!
//! This module must not spell a target or compile an argument schema: the writers fill
//! its slots.

use super::slots::{Slot, Target, Text, Union, marker};
use crate::define::tool::ToolSet;
use crate::syntax::{HARMONY_HEADER, Piece};
use toolgram_grammar::Expr;

const CHANNEL: Piece = HARMONY_HEADER[0];
const MESSAGE: Piece = HARMONY_HEADER[1];
const CONSTRAIN: Piece = HARMONY_HEADER[2];

/// The message calling tool `i`: its header, then its arguments.
pub(crate) fn call(u: &mut Union, tools: &ToolSet, i: usize, target: Target) -> Expr {
    let recipient = format!("to=functions.{}", tools.tools()[i].name);
    let content_type = Expr::opt(Expr::seq(vec![
        Expr::lit(" "),
        Expr::opt(marker(&[CONSTRAIN], target)),
        Expr::lit("json"),
    ]));
    let model = Expr::seq(vec![
        marker(&[CHANNEL], target),
        Expr::lit(format!("commentary {recipient}")),
    ]);
    let template = Expr::seq(vec![
        Expr::lit(format!(" {recipient}")),
        marker(&[CHANNEL], target),
        Expr::lit("commentary"),
    ]);
    let args = u.slot(
        &format!("args-{i}"),
        Slot::Args {
            tool: i,
            loose: false,
            again: false,
        },
    );
    Expr::seq(vec![
        Expr::alt(vec![model, template]),
        content_type,
        marker(&[MESSAGE], target),
        args,
    ])
}

/// A message on the final channel: the answer to the user, any text.
pub(crate) fn final_message(u: &mut Union, target: Target) -> Expr {
    let text = u.slot("text", Slot::Text(Text::Any));
    Expr::seq(vec![
        marker(&[CHANNEL], target),
        Expr::lit("final"),
        marker(&[MESSAGE], target),
        Expr::opt(text),
    ])
}
