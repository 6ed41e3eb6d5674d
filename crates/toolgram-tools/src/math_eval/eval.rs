//! Exact evaluation of a `math_eval` expression on big rationals, with every failure typed:
//! division by zero, a non-integer or too large exponent, a square root of a negative
//! number, and results beyond [`MAX_BITS`].

use super::{Expr, Op};
use crate::definition::ToolError;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use serde_json::{Value, json};

/// Largest numerator or denominator, in bits, a result may reach.
const MAX_BITS: u64 = 4096;
/// Decimal places of inexact results.
const PLACES: usize = 30;

/// A value and whether it is exact.
struct Num {
    v: BigRational,
    exact: bool,
}

fn too_big() -> ToolError {
    ToolError::Input(format!("overflow: the result exceeds {MAX_BITS} bits"))
}

fn checked(v: BigRational, exact: bool) -> Result<Num, ToolError> {
    if v.numer().bits() > MAX_BITS || v.denom().bits() > MAX_BITS {
        return Err(too_big());
    }
    Ok(Num { v, exact })
}

/// A decimal literal (`12.5`) as an exact rational.
fn decimal(text: &str) -> Result<BigRational, ToolError> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits: BigInt = format!("{int}{frac}")
        .parse()
        .map_err(|_| ToolError::Input(format!("not a number: {text}")))?;
    let scale = num_traits::pow(BigInt::from(10), frac.len());
    Ok(BigRational::new(digits, scale))
}

/// Digits an inexact value carries beyond the places shown, so the shown ones are right.
const GUARD: usize = 20;

const PI: &str = "3.14159265358979323846264338327950288419716939937510";
const E: &str = "2.71828182845904523536028747135266249775724709369995";

fn sqrt(x: &BigRational) -> Result<Num, ToolError> {
    if x.is_negative() {
        return Err(ToolError::Input("square root of a negative number".into()));
    }
    let (n, d) = (x.numer().sqrt(), x.denom().sqrt());
    if &(&n * &n) == x.numer() && &(&d * &d) == x.denom() {
        return checked(BigRational::new(n, d), true);
    }
    // sqrt(n/d) = sqrt(n·d)/d, to PLACES + GUARD decimal places (rounded down).
    let scale = num_traits::pow(BigInt::from(10), PLACES + GUARD);
    let root = (x.numer() * x.denom() * &scale * &scale).sqrt();
    checked(BigRational::new(root, x.denom() * scale), false)
}

fn power(base: &Num, exp: &Num) -> Result<Num, ToolError> {
    if !exp.v.is_integer() {
        return Err(ToolError::Input("exponents must be integers".into()));
    }
    let e = exp
        .v
        .to_integer()
        .to_i32()
        .filter(|e| e.abs() <= 10_000)
        .ok_or_else(too_big)?;
    if base.v.is_zero() && e < 0 {
        return Err(ToolError::Input("division by zero".into()));
    }
    // Bound the size before computing it.
    let bits = base.v.numer().bits().max(base.v.denom().bits());
    if bits.saturating_mul(e.unsigned_abs() as u64) > MAX_BITS {
        return Err(too_big());
    }
    checked(
        num_traits::pow::Pow::pow(&base.v, e),
        base.exact && exp.exact,
    )
}

fn eval(e: &Expr) -> Result<Num, ToolError> {
    match e {
        Expr::Number(n) => checked(decimal(n)?, true),
        Expr::Constant(c) => checked(decimal(if c == "pi" { PI } else { E })?, false),
        Expr::Group(x) => eval(x),
        Expr::Neg(x) => {
            let n = eval(x)?;
            Ok(Num {
                v: -n.v,
                exact: n.exact,
            })
        }
        Expr::Binary(a, op, b) => {
            let (a, b) = (eval(a)?, eval(b)?);
            let exact = a.exact && b.exact;
            match op {
                Op::Add => checked(a.v + b.v, exact),
                Op::Sub => checked(a.v - b.v, exact),
                Op::Mul => checked(a.v * b.v, exact),
                Op::Div if b.v.is_zero() => Err(ToolError::Input("division by zero".into())),
                Op::Div => checked(a.v / b.v, exact),
                Op::Pow => power(&a, &b),
            }
        }
        Expr::Call(f, args) => {
            let vals = args.iter().map(eval).collect::<Result<Vec<_>, _>>()?;
            let exact = vals.iter().all(|v| v.exact);
            let one = |vals: Vec<Num>| -> Result<Num, ToolError> {
                let mut it = vals.into_iter();
                match (it.next(), it.next()) {
                    (Some(v), None) => Ok(v),
                    _ => Err(ToolError::Input(format!("{f} takes one argument"))),
                }
            };
            match f.as_str() {
                "abs" => one(vals).map(|n| Num {
                    v: n.v.abs(),
                    exact,
                }),
                "floor" => one(vals).map(|n| Num {
                    v: n.v.floor(),
                    exact,
                }),
                "ceil" => one(vals).map(|n| Num {
                    v: n.v.ceil(),
                    exact,
                }),
                "round" => one(vals).map(|n| Num {
                    v: n.v.round(),
                    exact,
                }),
                "sqrt" => one(vals).and_then(|n| {
                    sqrt(&n.v).map(|r| Num {
                        exact: r.exact && n.exact,
                        ..r
                    })
                }),
                "min" | "max" => {
                    let pick = vals.into_iter().reduce(|a, b| {
                        let take_b = if f == "min" { b.v < a.v } else { b.v > a.v };
                        if take_b { b } else { a }
                    });
                    pick.map(|n| Num { v: n.v, exact })
                        .ok_or_else(|| ToolError::Input(format!("{f} needs an argument")))
                }
                other => Err(ToolError::Input(format!("unknown function {other}"))),
            }
        }
    }
}

/// `v` written in decimal: exact when the expansion ends, else rounded to [`PLACES`].
fn to_decimal(v: &BigRational) -> String {
    let sign = if v.is_negative() { "-" } else { "" };
    let v = v.abs();
    let (int, mut rem) = v.numer().div_rem(v.denom());
    let mut digits = String::new();
    while !rem.is_zero() && digits.len() < PLACES {
        rem *= 10;
        let (d, r) = rem.div_rem(v.denom());
        digits.push_str(&d.to_string());
        rem = r;
    }
    if digits.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{digits}")
    }
}

/// Evaluate and describe the result.
pub(super) fn evaluate(e: &Expr) -> Result<Value, ToolError> {
    let n = eval(e)?;
    let decimal = to_decimal(&n.v);
    // An inexact value's fraction only spells out its guard digits: give the decimal.
    let value = if !n.exact {
        decimal.clone()
    } else if n.v.denom().is_one() {
        n.v.numer().to_string()
    } else {
        format!("{}/{}", n.v.numer(), n.v.denom())
    };
    Ok(json!({"value": value, "decimal": decimal, "exact": n.exact}))
}
