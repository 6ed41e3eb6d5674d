//! A request body read as JSON with every object's keys distinct: a key given twice is an
//! error naming it (serde_json's own reading keeps the last, so `{"model":"nope","model":"a"}`
//! would read as the second while a proxy in front may have checked the first). Nesting is
//! bounded by serde_json's recursion limit, as before. This module must not interpret the
//! body.

use crate::clip::cut;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// The longest key an error repeats.
const MAX_NAMED_KEY: usize = 64;

/// `bytes` as a JSON value, or why not (a duplicate key among the reasons).
pub fn parse(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Distinct.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A JSON value whose objects have distinct keys.
struct Distinct;

impl<'de> DeserializeSeed<'de> for Distinct {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Distinct {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Distinct)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut o = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if o.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the key `{}` is given twice in one object",
                    cut(&key, MAX_NAMED_KEY)
                )));
            }
            let value = map.next_value_seed(Distinct)?;
            o.insert(key, value);
        }
        Ok(Value::Object(o))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_key_given_twice_is_refused_by_name_at_any_depth() {
        let top = parse(br#"{"model":"nope","model":"a"}"#).expect_err("refused");
        assert!(top.to_string().contains("`model` is given twice"), "{top}");
        let deep = parse(br#"{"tools":[{"a":1,"b":{"c":1,"c":2}}]}"#).expect_err("refused");
        assert!(deep.to_string().contains("`c`"), "{deep}");
    }

    #[test]
    fn distinct_keys_read_as_serde_json_reads_them() {
        let text = r#"{"a":[1,-2,3.5,1e300,18446744073709551615,true,null,"\u00e9"],"b":{}}"#;
        assert_eq!(
            parse(text.as_bytes()).expect("reads"),
            serde_json::from_str::<Value>(text).expect("reads")
        );
        assert_eq!(
            parse(b"[{}, {\"x\": 1}]").expect("reads"),
            json!([{}, {"x": 1}])
        );
        assert!(parse(b"{} {}").is_err(), "trailing text");
    }

    #[test]
    fn nesting_past_serde_jsons_limit_is_refused_not_overflowed() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(deep.as_bytes()).expect_err("too deep");
        assert!(e.to_string().contains("recursion limit"), "{e}");
    }
}
