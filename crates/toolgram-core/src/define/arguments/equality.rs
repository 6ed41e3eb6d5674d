//! JSON-Schema equality for the post-parse validator's `const`, `enum` and `uniqueItems`:
//! numbers by value (`1` equals `1.0`), objects whatever their key order. The `jsonschema`
//! crate compares objects key by key in iteration order, and with serde_json's
//! `preserve_order` (kept so properties follow the schema's order) that is the order they
//! were written in: `{"a":1,"b":2}` and `{"b":2,"a":1}` differed, so such duplicates passed
//! `uniqueItems` and a valid `enum`/`const` object was refused.
//!
//! It must not change what counts as equal otherwise; errors keep the crate's own kinds.

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::{LazyLocation, Location};
use jsonschema::{Keyword, ValidationError};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;

fn numbers_equal(a: &Number, b: &Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ if a.is_f64() || b.is_f64() => a.as_f64() == b.as_f64(),
        _ => false, // one above i64::MAX, the other negative
    }
}

/// Whether two JSON values are equal as JSON Schema defines it.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// Which keyword a [`Checked`] stands for.
enum Rule {
    Const(Value),
    Enum(Value),
    UniqueItems,
    /// `uniqueItems: false` asks nothing.
    Nothing,
}

struct Checked {
    rule: Rule,
    location: Location,
}

impl Keyword for Checked {
    fn validate<'i>(
        &self,
        instance: &'i Value,
        location: &LazyLocation,
    ) -> Result<(), ValidationError<'i>> {
        if self.is_valid(instance) {
            return Ok(());
        }
        let kind = match &self.rule {
            Rule::Const(v) => ValidationErrorKind::Constant {
                expected_value: v.clone(),
            },
            Rule::Enum(options) => ValidationErrorKind::Enum {
                options: options.clone(),
            },
            Rule::UniqueItems | Rule::Nothing => ValidationErrorKind::UniqueItems,
        };
        Err(ValidationError {
            instance: Cow::Borrowed(instance),
            kind,
            instance_path: location.into(),
            schema_path: self.location.clone(),
        })
    }

    fn is_valid(&self, instance: &Value) -> bool {
        match &self.rule {
            Rule::Const(v) => equal(instance, v),
            Rule::Enum(Value::Array(options)) => options.iter().any(|o| equal(instance, o)),
            Rule::Enum(_) => false,
            Rule::UniqueItems => match instance {
                Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .all(|(i, a)| items[i + 1..].iter().all(|b| !equal(a, b))),
                _ => true,
            },
            Rule::Nothing => true,
        }
    }
}

fn boxed(rule: Rule, location: Location) -> Box<dyn Keyword> {
    Box::new(Checked { rule, location })
}

fn refuse<'a>(schema: &'a Value, location: Location, what: &str) -> ValidationError<'a> {
    ValidationError::custom(Location::new(), location, schema, what)
}

/// `const`, for `jsonschema::options().with_keyword`.
#[allow(clippy::result_large_err)]
pub(super) fn const_factory<'a>(
    _parent: &'a Map<String, Value>,
    schema: &'a Value,
    location: Location,
) -> Result<Box<dyn Keyword>, ValidationError<'a>> {
    Ok(boxed(Rule::Const(schema.clone()), location))
}

/// `enum`, for `jsonschema::options().with_keyword`.
#[allow(clippy::result_large_err)]
pub(super) fn enum_factory<'a>(
    _parent: &'a Map<String, Value>,
    schema: &'a Value,
    location: Location,
) -> Result<Box<dyn Keyword>, ValidationError<'a>> {
    match schema {
        Value::Array(_) => Ok(boxed(Rule::Enum(schema.clone()), location)),
        _ => Err(refuse(schema, location, "enum must be an array")),
    }
}

/// `uniqueItems`, for `jsonschema::options().with_keyword`.
#[allow(clippy::result_large_err)]
pub(super) fn unique_items_factory<'a>(
    _parent: &'a Map<String, Value>,
    schema: &'a Value,
    location: Location,
) -> Result<Box<dyn Keyword>, ValidationError<'a>> {
    match schema {
        Value::Bool(true) => Ok(boxed(Rule::UniqueItems, location)),
        Value::Bool(false) => Ok(boxed(Rule::Nothing, location)),
        _ => Err(refuse(schema, location, "uniqueItems must be a boolean")),
    }
}

#[cfg(test)]
mod tests {
    use super::equal;
    use serde_json::json;

    #[test]
    fn objects_are_equal_whatever_their_key_order_and_numbers_by_value() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{"a": 1, "b": [2.0, {"c": 3}]}"#).expect("json");
        let b: serde_json::Value =
            serde_json::from_str(r#"{"b": [2, {"c": 3.0}], "a": 1.0}"#).expect("json");
        assert!(equal(&a, &b));
        assert!(!equal(&a, &json!({"a": 1, "b": [2, {"c": 4}]})));
        assert!(!equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!equal(&json!(1), &json!("1")));
        assert!(!equal(&json!([1, 2]), &json!([2, 1])));
        assert!(equal(&json!(-3), &json!(-3.0)));
        assert!(!equal(&json!(u64::MAX), &json!(-1)));
    }
}
