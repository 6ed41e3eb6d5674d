//! Custom argument rules turned into JSON Schema the grammar can enforce: the object a rule
//! talks about becomes an `anyOf` of variants (for `exactly_one_of: [a, b]`: one variant
//! without `b` requiring `a`, one without `a` requiring `b`), so under `--mode grammar` a model
//! cannot break a rule in the first place.
//!
//! Only closed objects (`additionalProperties: false`, no combinators of their own) are
//! rewritten, and at most [`MAX_VARIANTS`] variants are made; otherwise the schema is left as
//! it is and the rule is enforced after parse only (the validator always checks it). This
//! module must not weaken a schema: every variant is the original object with properties
//! removed or made required.

use crate::define::rules::{ArgumentRule, RuleKind};
use serde_json::{Map, Value};

/// The most variants one object may be split into.
pub const MAX_VARIANTS: usize = 32;

/// `schema` (already closed, see `compile::close_objects`) with `rules` built in where that is
/// possible. Returns the schema and the rules left to the validator alone.
pub fn with_rules<'r>(rules: &'r [ArgumentRule], schema: &Value) -> (Value, Vec<&'r ArgumentRule>) {
    let mut out = schema.clone();
    let mut left = Vec::new();
    let mut locations: Vec<&str> = rules.iter().map(|r| r.at.as_str()).collect();
    locations.dedup();
    locations.sort_unstable();
    locations.dedup();
    for at in locations {
        let here: Vec<&ArgumentRule> = rules.iter().filter(|r| r.at == at).collect();
        let done = object_at(&mut out, at)
            .and_then(|obj| split(obj, &here).map(|new| *obj = new))
            .is_some();
        if !done {
            left.extend(here);
        }
    }
    (out, left)
}

fn object_at<'v>(schema: &'v mut Value, at: &str) -> Option<&'v mut Value> {
    let mut s = schema;
    for part in at.split('/').skip(1) {
        let part = toolgram_grammar::schema::refs::unescape_token(part);
        s = s.get_mut("properties")?.get_mut(&part)?;
    }
    Some(s)
}

fn split(obj: &Value, rules: &[&ArgumentRule]) -> Option<Value> {
    let map = obj.as_object()?;
    let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
    let combined = [
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "not",
        "if",
        "dependentRequired",
    ]
    .iter()
    .any(|k| map.contains_key(*k));
    if !closed || combined || !map.contains_key("properties") {
        return None;
    }
    let mut variants = vec![map.clone()];
    for rule in rules {
        variants = variants
            .iter()
            .flat_map(|v| apply(v, &rule.kind))
            .filter(satisfiable)
            .collect();
        if variants.is_empty() || variants.len() > MAX_VARIANTS {
            return None;
        }
    }
    if variants.len() == 1 {
        return variants.pop().map(Value::Object);
    }
    Some(Value::Object(Map::from_iter([(
        "anyOf".to_owned(),
        Value::Array(variants.into_iter().map(Value::Object).collect()),
    )])))
}

type Obj = Map<String, Value>;

fn apply(v: &Obj, kind: &RuleKind) -> Vec<Obj> {
    let others = |n: &[String], keep: &String| -> Vec<String> {
        n.iter().filter(|x| *x != keep).cloned().collect()
    };
    match kind {
        RuleKind::MutuallyExclusive(n) => std::iter::once(remove(v, n))
            .chain(n.iter().map(|k| remove(v, &others(n, k))))
            .collect(),
        RuleKind::ExactlyOneOf(n) => n
            .iter()
            .map(|k| require(&remove(v, &others(n, k)), std::slice::from_ref(k)))
            .collect(),
        RuleKind::AtLeastOneOf(n) => n
            .iter()
            .map(|k| require(v, std::slice::from_ref(k)))
            .collect(),
        RuleKind::DependentRequired { property, requires } => {
            let mut all = vec![property.clone()];
            all.extend(requires.iter().cloned());
            vec![remove(v, std::slice::from_ref(property)), require(v, &all)]
        }
    }
}

fn remove(v: &Obj, names: &[String]) -> Obj {
    let mut v = v.clone();
    if let Some(Value::Object(props)) = v.get_mut("properties") {
        props.retain(|k, _| !names.contains(k));
    }
    v
}

fn require(v: &Obj, names: &[String]) -> Obj {
    let mut v = v.clone();
    let mut req: Vec<Value> = v
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for n in names {
        if !req.iter().any(|r| r.as_str() == Some(n)) {
            req.push(Value::String(n.clone()));
        }
    }
    v.insert("required".into(), Value::Array(req));
    v
}

/// A variant that requires a property it no longer has can never match.
fn satisfiable(v: &Obj) -> bool {
    let props = v.get("properties").and_then(Value::as_object);
    v.get("required")
        .and_then(Value::as_array)
        .is_none_or(|req| {
            req.iter()
                .filter_map(Value::as_str)
                .all(|r| props.is_some_and(|p| p.contains_key(r)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::define::rules::read_rules;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"city": {"type": "string"},
            "coords": {"type": "string"}, "unit": {"type": "string"}},
            "additionalProperties": false})
    }

    fn compiled(rules: Value) -> (Value, usize) {
        let rules = read_rules(&rules, &schema()).expect("valid rules");
        let (s, left) = with_rules(&rules, &schema());
        (s, left.len())
    }

    /// Every instance the rewritten schema accepts keeps the rule, and every instance that
    /// keeps the rule and the original schema is still accepted.
    fn agrees(rules: Value) {
        let read = read_rules(&rules, &schema()).expect("valid rules");
        let (s, left) = with_rules(&read, &schema());
        assert!(left.is_empty(), "{s}");
        let new = jsonschema::validator_for(&s).expect("valid schema");
        let old = jsonschema::validator_for(&schema()).expect("valid schema");
        let values = [None, Some("x")];
        for city in values {
            for coords in values {
                for unit in values {
                    let mut args = Map::new();
                    for (k, v) in [("city", city), ("coords", coords), ("unit", unit)] {
                        if let Some(v) = v {
                            args.insert(k.into(), json!(v));
                        }
                    }
                    let args = Value::Object(args);
                    let keeps =
                        old.is_valid(&args) && read.iter().all(|r| r.check("t", &args).is_none());
                    assert_eq!(new.is_valid(&args), keeps, "{rules} on {args}: {s}");
                }
            }
        }
    }

    #[test]
    fn each_rule_kind_compiles_to_an_equivalent_schema() {
        agrees(json!([{"mutually_exclusive": ["city", "coords"]}]));
        agrees(json!([{"exactly_one_of": ["city", "coords"]}]));
        agrees(json!([{"at_least_one_of": ["city", "coords", "unit"]}]));
        agrees(json!([{"dependent_required": {"unit": ["city"]}}]));
        agrees(
            json!([{"exactly_one_of": ["city", "coords"]}, {"dependent_required": {"unit": ["city"]}}]),
        );
    }

    #[test]
    fn open_objects_are_left_to_the_validator() {
        let open = json!({"type": "object", "properties": {"a": {}, "b": {}}});
        let rules = read_rules(&json!([{"mutually_exclusive": ["a", "b"]}]), &open).expect("valid");
        let (s, left) = with_rules(&rules, &open);
        assert_eq!(s, open);
        assert_eq!(left.len(), 1);
        assert_eq!(
            compiled(json!([{"exactly_one_of": ["city", "coords"]}])).1,
            0
        );
    }
}
