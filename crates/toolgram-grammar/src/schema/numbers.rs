//! Integer ranges as exact digit grammars (in the manner of llama.cpp's
//! `_generate_min_max_int`) under the number policy: at most [`MAX_DIGITS`] integer digits,
//! no leading zeros, no `-0`.
//!
//! This module must not guess at non-integer bounds: the compiler defers those.

use crate::Expr;

/// Integer digits the grammar allows: every 64-bit integer (llama.cpp allows 16).
pub const MAX_DIGITS: u32 = 20;

/// The largest magnitude with [`MAX_DIGITS`] digits.
pub const MAX_MAG: i128 = 10_i128.pow(MAX_DIGITS) - 1;

fn digits(n: i128, len: usize) -> Vec<u8> {
    let s = format!("{n:0len$}");
    s.bytes().map(|b| b - b'0').collect()
}

fn digit(d: u8) -> char {
    char::from(b'0' + d)
}

fn any_digits(n: usize) -> Expr {
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    Expr::repeat(Expr::class(&[('0', '9')]), n, Some(n))
}

/// Numbers between `lo` and `hi` (same length, `lo <= hi`), digit by digit.
fn same_len(lo: &[u8], hi: &[u8]) -> Expr {
    let (Some((&l, lo_rest)), Some((&h, hi_rest))) = (lo.split_first(), hi.split_first()) else {
        return Expr::Seq(Vec::new());
    };
    if l == h {
        return Expr::seq(vec![
            Expr::lit(digit(l).to_string()),
            same_len(lo_rest, hi_rest),
        ]);
    }
    let lo_min = lo_rest.iter().all(|&d| d == 0);
    let hi_max = hi_rest.iter().all(|&d| d == 9);
    let mut alts = Vec::new();
    let start = if lo_min {
        l
    } else {
        let nines = vec![9; lo_rest.len()];
        alts.push(Expr::seq(vec![
            Expr::lit(digit(l).to_string()),
            same_len(lo_rest, &nines),
        ]));
        l + 1
    };
    let end = if hi_max { h } else { h - 1 };
    if start <= end {
        alts.push(Expr::seq(vec![
            Expr::class(&[(digit(start), digit(end))]),
            any_digits(lo_rest.len()),
        ]));
    }
    if !hi_max {
        let zeros = vec![0; hi_rest.len()];
        alts.push(Expr::seq(vec![
            Expr::lit(digit(h).to_string()),
            same_len(&zeros, hi_rest),
        ]));
    }
    Expr::alt(alts)
}

fn len_of(n: i128) -> usize {
    n.to_string().len()
}

/// Non-negative integers in `lo..=hi` (`0 <= lo <= hi <= MAX_MAG`).
fn nonneg(lo: i128, hi: i128) -> Expr {
    let mut alts = Vec::new();
    for len in len_of(lo)..=len_of(hi) {
        let floor = if len == 1 {
            0
        } else {
            10_i128.pow(len as u32 - 1)
        };
        let a = lo.max(floor);
        if hi == MAX_MAG && a == floor && len > 1 {
            let (min, max) = (len as u32 - 1, MAX_DIGITS - 1);
            alts.push(Expr::seq(vec![
                Expr::class(&[('1', '9')]),
                Expr::repeat(Expr::class(&[('0', '9')]), min, Some(max)),
            ]));
            break;
        }
        let b = hi.min(10_i128.pow(len as u32) - 1);
        alts.push(same_len(&digits(a, len), &digits(b, len)));
    }
    Expr::alt(alts)
}

/// Integers in `min..=max` (either side open); `None` when no integer of at most
/// [`MAX_DIGITS`] digits is in range.
pub fn int_range(min: Option<i128>, max: Option<i128>) -> Option<Expr> {
    let lo = min.unwrap_or(-MAX_MAG).max(-MAX_MAG);
    let hi = max.unwrap_or(MAX_MAG).min(MAX_MAG);
    if lo > hi {
        return None;
    }
    let mut alts = Vec::new();
    if lo < 0 {
        let from = if hi < 0 { -hi } else { 1 };
        alts.push(Expr::seq(vec![Expr::lit("-"), nonneg(from, -lo)]));
    }
    if hi >= 0 {
        alts.push(nonneg(lo.max(0), hi));
    }
    Some(Expr::alt(alts))
}

/// A JSON number under the number policy; `nonneg`/`neg` restrict the sign.
pub fn number(sign: Sign) -> Expr {
    let int = Expr::alt(vec![
        Expr::lit("0"),
        Expr::seq(vec![
            Expr::class(&[('1', '9')]),
            Expr::repeat(Expr::class(&[('0', '9')]), 0, Some(MAX_DIGITS - 1)),
        ]),
    ]);
    let frac = Expr::opt(Expr::seq(vec![
        Expr::lit("."),
        Expr::repeat(Expr::class(&[('0', '9')]), 1, Some(20)),
    ]));
    let exp = Expr::opt(Expr::seq(vec![
        Expr::class(&[('e', 'e'), ('E', 'E')]),
        Expr::opt(Expr::class(&[('+', '+'), ('-', '-')])),
        Expr::repeat(Expr::class(&[('0', '9')]), 1, Some(4)),
    ]));
    let minus = match sign {
        Sign::Any => Expr::opt(Expr::lit("-")),
        Sign::NonNegative => Expr::Seq(Vec::new()),
        Sign::Negative => Expr::lit("-"),
    };
    Expr::seq(vec![minus, int, frac, exp])
}

/// The signs a number may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// Either.
    Any,
    /// No minus sign.
    NonNegative,
    /// A minus sign.
    Negative,
}
