//! `multipleOf`, checked exactly on the numbers' decimal text for the post-parse validator:
//! the `jsonschema` crate's own check calls every negative number a non-multiple
//! (`-500.25` of `0.01`).
//!
//! It must not round: a value is a multiple only when the quotient is an integer exactly.

use jsonschema::paths::{LazyLocation, Location};
use jsonschema::{Keyword, ValidationError};
use serde_json::{Map, Number, Value};

/// A decimal as `digits × 10^exp` (sign dropped: it does not change divisibility).
fn decimal(n: &Number) -> Option<(u128, i32)> {
    let text = n.to_string();
    let text = text.trim_start_matches('-');
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    let frac_len = i32::try_from(frac.len()).ok()?;
    Some((digits, exp.checked_sub(frac_len)?))
}

/// `base^exp mod m` without overflow (`m` < 2^64).
fn pow_mod(mut base: u128, mut exp: u32, m: u128) -> u128 {
    let mut out = 1 % m;
    base %= m;
    while exp > 0 {
        if exp & 1 == 1 {
            out = out * base % m;
        }
        base = base * base % m;
        exp >>= 1;
    }
    out
}

/// Whether `value` divided by `multiple` is an integer; `None` when the numbers are too
/// large to decide exactly.
pub(super) fn is_multiple(value: &Number, multiple: &Number) -> Option<bool> {
    let (a, ea) = decimal(value)?;
    let (b, eb) = decimal(multiple)?;
    if a == 0 {
        return Some(true);
    }
    if b == 0 || b >= 1 << 64 || a >= 1 << 64 {
        return None;
    }
    // value / multiple = (a / b) × 10^(ea − eb)
    let k = ea - eb;
    if k >= 0 {
        let shift = pow_mod(10, u32::try_from(k).ok()?, b);
        Some((a % b * shift).is_multiple_of(b))
    } else {
        let scale = 10u128.checked_pow(u32::try_from(-k).ok()?);
        Some(
            scale
                .and_then(|s| b.checked_mul(s))
                .is_some_and(|d| a % d == 0),
        )
    }
}

struct MultipleOf {
    multiple: Number,
    location: Location,
}

impl Keyword for MultipleOf {
    fn validate<'i>(
        &self,
        instance: &'i Value,
        location: &LazyLocation,
    ) -> Result<(), ValidationError<'i>> {
        if self.is_valid(instance) {
            return Ok(());
        }
        Err(ValidationError::custom(
            self.location.clone(),
            location.into(),
            instance,
            format!("{instance} is not a multiple of {}", self.multiple),
        ))
    }

    fn is_valid(&self, instance: &Value) -> bool {
        let Value::Number(n) = instance else {
            return true;
        };
        match is_multiple(n, &self.multiple) {
            Some(ok) => ok,
            // Too large for exact digits: the quotient in floating point.
            None => match (n.as_f64(), self.multiple.as_f64()) {
                (Some(v), Some(m)) if m != 0.0 => (v / m).fract() == 0.0,
                _ => false,
            },
        }
    }
}

/// The `multipleOf` keyword for `jsonschema::options().with_keyword` (whose factory
/// signature fixes the error type).
#[allow(clippy::result_large_err)]
pub(super) fn factory<'a>(
    _parent: &'a Map<String, Value>,
    schema: &'a Value,
    location: Location,
) -> Result<Box<dyn Keyword>, ValidationError<'a>> {
    match schema {
        Value::Number(m) if m.as_f64().is_some_and(|f| f > 0.0) => Ok(Box::new(MultipleOf {
            multiple: m.clone(),
            location,
        })),
        _ => Err(ValidationError::custom(
            Location::new(),
            location,
            schema,
            "multipleOf must be a number above 0",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::is_multiple;
    use serde_json::Number;

    fn n(s: &str) -> Number {
        serde_json::from_str(s).expect("a number")
    }

    #[test]
    fn decimals_are_divided_exactly_whatever_the_sign() {
        for (v, m, want) in [
            ("-500.25", "0.01", true),
            ("500.25", "0.01", true),
            ("0.3", "0.1", true),
            ("-2", "0.5", true),
            ("7", "2", false),
            ("1e-7", "1e-8", true),
            ("1e-8", "1e-7", false),
            ("12.345", "0.01", false),
            ("0", "3.7", true),
            ("4.5", "1.5", true),
        ] {
            assert_eq!(is_multiple(&n(v), &n(m)), Some(want), "{v} / {m}");
        }
    }
}
