//! The typed input of the tool: the expression its grammar's parse tree reads into, which the
//! executor runs and the emitter writes back as text.
//!
//! This module must not parse text or run anything.

use serde::{Deserialize, Serialize};

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `^`
    Pow,
}

/// The typed input: the expression tree, parentheses included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    /// A decimal literal, as written.
    Number(String),
    /// `pi` or `e`.
    Constant(String),
    /// `-x`.
    Neg(Box<Expr>),
    /// `a op b`.
    Binary(Box<Expr>, Op, Box<Expr>),
    /// `f(a, …)`.
    Call(String, Vec<Expr>),
    /// `(x)`.
    Group(Box<Expr>),
}
