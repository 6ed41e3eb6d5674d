//! `math_eval`: arithmetic on exact rationals. `+ - * / ^`, unary minus, parentheses,
//! decimal literals, the constants `pi` and `e` and the functions `abs min max floor ceil
//! round sqrt`. Results are exact fractions where the maths allows; irrational constants (50
//! digits) and inexact square roots (computed on big integers to 50 places) make a result
//! `exact: false`, given as its decimal to 30 places, every one of them right;
//! division by zero and results beyond a size limit are typed errors, never panics.
//!
//! Example: `(1/3 + 1/6) * 2^3` → `{"value": "4", "decimal": "4", "exact": true}`.

mod input;

mod eval;

use crate::definition::{GrammarTool, RunContext, Samples, ToolError};
use serde_json::Value;
use toolgram_grammar::tree::ParseTree;

/// Sample texts the grammar must accept and refuse: every
/// registered tool's are checked under llguidance, llama.cpp's grammar engine and its parser.
pub const SAMPLES: Samples = Samples {
    accepted: &[
        "1+2",
        "(1/3 + 1/6) * 2^3",
        "-sqrt(2) + max(1, pi, e)",
        "abs(-1.25)",
    ],
    refused: &["1+", "cos(1)", "1;2"],
};

pub use input::{Expr, Op};

/// The tool.
pub struct MathEval;

const GRAMMAR: &str = r#"start: sum
sum: product (_s ADDOP _s product)*
product: power (_s MULOP _s power)*
power: unary (_s "^" _s unary)?
unary: NEG unary | atom
atom: NUMBER | CONST | call | group
group: "(" _s sum _s ")"
call: FUNC "(" _s sum (_s "," _s sum)* _s ")"
_s: " "?
NEG: "-"
ADDOP: "+" | "-"
MULOP: "*" | "/"
NUMBER: /[0-9]{1,30}(\.[0-9]{1,30})?/
CONST: "pi" | "e"
FUNC: "abs" | "min" | "max" | "floor" | "ceil" | "round" | "sqrt"
"#;

fn bad(what: &str) -> ToolError {
    ToolError::Grammar(format!("unexpected parse shape at `{what}`"))
}

fn op(text: &str) -> Result<Op, ToolError> {
    Ok(match text {
        "+" => Op::Add,
        "-" => Op::Sub,
        "*" => Op::Mul,
        "/" => Op::Div,
        "^" => Op::Pow,
        other => return Err(bad(other)),
    })
}

/// Left-associative chain `x (OP x)*` of the rule `name` over operand rule `operand`.
fn chain(
    t: &ParseTree,
    src: &str,
    op_name: &str,
    operand: fn(&ParseTree, &str) -> Result<Expr, ToolError>,
) -> Result<Expr, ToolError> {
    let mut kids = t.children.iter();
    let first = kids.next().ok_or_else(|| bad(&t.name))?;
    let mut acc = operand(first, src)?;
    while let Some(o) = kids.next() {
        if o.name != op_name {
            return Err(bad(&o.name));
        }
        let rhs = kids.next().ok_or_else(|| bad(&t.name))?;
        acc = Expr::Binary(
            Box::new(acc),
            op(o.text(src))?,
            Box::new(operand(rhs, src)?),
        );
    }
    Ok(acc)
}

fn sum(t: &ParseTree, src: &str) -> Result<Expr, ToolError> {
    chain(t, src, "ADDOP", product)
}

fn product(t: &ParseTree, src: &str) -> Result<Expr, ToolError> {
    chain(t, src, "MULOP", power)
}

fn power(t: &ParseTree, src: &str) -> Result<Expr, ToolError> {
    match t.children.as_slice() {
        [base] => unary(base, src),
        [base, exp] => Ok(Expr::Binary(
            Box::new(unary(base, src)?),
            Op::Pow,
            Box::new(unary(exp, src)?),
        )),
        _ => Err(bad("power")),
    }
}

fn unary(t: &ParseTree, src: &str) -> Result<Expr, ToolError> {
    match t.children.as_slice() {
        [neg, inner] if neg.name == "NEG" => Ok(Expr::Neg(Box::new(unary(inner, src)?))),
        [a] if a.name == "atom" => atom(a, src),
        _ => Err(bad("unary")),
    }
}

fn atom(t: &ParseTree, src: &str) -> Result<Expr, ToolError> {
    let [inner] = t.children.as_slice() else {
        return Err(bad("atom"));
    };
    match inner.name.as_str() {
        "NUMBER" => Ok(Expr::Number(inner.text(src).to_owned())),
        "CONST" => Ok(Expr::Constant(inner.text(src).to_owned())),
        "group" => {
            let s = inner.child("sum").ok_or_else(|| bad("group"))?;
            Ok(Expr::Group(Box::new(sum(s, src)?)))
        }
        "call" => {
            let f = inner.child("FUNC").ok_or_else(|| bad("call"))?;
            let args = inner
                .children_named("sum")
                .map(|a| sum(a, src))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Expr::Call(f.text(src).to_owned(), args))
        }
        other => Err(bad(other)),
    }
}

fn write(e: &Expr, out: &mut String) {
    match e {
        Expr::Number(n) | Expr::Constant(n) => out.push_str(n),
        Expr::Neg(x) => {
            out.push('-');
            write(x, out);
        }
        Expr::Binary(a, o, b) => {
            write(a, out);
            out.push_str(match o {
                Op::Add => " + ",
                Op::Sub => " - ",
                Op::Mul => " * ",
                Op::Div => " / ",
                Op::Pow => "^",
            });
            write(b, out);
        }
        Expr::Call(f, args) => {
            out.push_str(f);
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(a, out);
            }
            out.push(')');
        }
        Expr::Group(x) => {
            out.push('(');
            write(x, out);
            out.push(')');
        }
    }
}

impl GrammarTool for MathEval {
    type Input = Expr;

    fn name(&self) -> &str {
        "math_eval"
    }

    fn description(&self) -> String {
        "Evaluate an arithmetic expression exactly: + - * / ^, parentheses, decimals, pi, e, \
         abs/min/max/floor/ceil/round/sqrt. Example: (1/3 + 1/6) * 2^3"
            .into()
    }

    fn lark(&self) -> String {
        GRAMMAR.to_owned()
    }

    fn input_from_tree(&self, tree: &ParseTree, src: &str) -> Result<Expr, ToolError> {
        let s = tree.child("sum").ok_or_else(|| bad("start"))?;
        sum(s, src)
    }

    fn emit(&self, input: &Expr) -> String {
        let mut out = String::new();
        write(input, &mut out);
        out
    }

    fn run(&self, input: &Expr, _ctx: &RunContext) -> Result<Value, ToolError> {
        eval::evaluate(input)
    }
}

#[cfg(test)]
mod tests;
