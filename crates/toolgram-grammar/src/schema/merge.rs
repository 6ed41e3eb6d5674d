//! `allOf` (and `$ref` with siblings) as one schema: properties merged recursively,
//! `required` united, `type` intersected, bounds tightened.
//!
//! A pair of values it cannot combine is reported, so the caller defers `allOf`; merging
//! must never loosen a member.

use super::keywords::Holds;
use serde_json::{Map, Value};

/// Merge `b` into `a`. Returns false when some keyword could not be combined exactly (the
/// first value was kept).
pub(super) fn merge_into(a: &mut Map<String, Value>, b: &Map<String, Value>) -> bool {
    let mut exact = true;
    for (k, bv) in b {
        let Some(av) = a.get_mut(k) else {
            a.insert(k.clone(), bv.clone());
            continue;
        };
        if av == bv {
            continue;
        }
        match k.as_str() {
            _ if super::walk::holds(k) == Holds::Map => {
                if let (Value::Object(am), Value::Object(bm)) = (&mut *av, bv) {
                    for (name, bs) in bm {
                        match am.get_mut(name) {
                            None => {
                                am.insert(name.clone(), bs.clone());
                            }
                            Some(existing) => {
                                exact &= merge_schema(existing, bs);
                            }
                        }
                    }
                } else {
                    exact = false;
                }
            }
            "required" => {
                if let (Value::Array(ar), Value::Array(br)) = (&mut *av, bv) {
                    for x in br {
                        if !ar.contains(x) {
                            ar.push(x.clone());
                        }
                    }
                } else {
                    exact = false;
                }
            }
            "type" => {
                let list = |v: &Value| -> Vec<Value> {
                    match v {
                        Value::Array(a) => a.clone(),
                        other => vec![other.clone()],
                    }
                };
                let (al, bl) = (list(av), list(bv));
                let both: Vec<Value> = al
                    .into_iter()
                    .filter(|t| {
                        bl.contains(t) || (t == "integer" && bl.iter().any(|x| x == "number"))
                    })
                    .chain(
                        bl.iter()
                            .filter(|t| *t == "integer" && list(av).iter().any(|x| x == "number"))
                            .cloned(),
                    )
                    .collect();
                *av = Value::Array(both);
            }
            "minimum" | "minLength" | "minItems" | "minProperties" | "exclusiveMinimum" => {
                exact &= pick(av, bv, |x, y| x >= y);
            }
            "maximum" | "maxLength" | "maxItems" | "maxProperties" | "exclusiveMaximum" => {
                exact &= pick(av, bv, |x, y| x <= y);
            }
            "allOf" => {
                if let (Value::Array(ar), Value::Array(br)) = (&mut *av, bv) {
                    ar.extend(br.iter().cloned());
                }
            }
            _ if is_annotation(k) => {}
            _ => exact = false,
        }
    }
    exact
}

fn is_annotation(k: &str) -> bool {
    matches!(
        super::keywords::lookup(k).map(|r| r.ours),
        Some(super::keywords::Class::Annotation)
    )
}

fn merge_schema(a: &mut Value, b: &Value) -> bool {
    match (&mut *a, b) {
        (Value::Object(am), Value::Object(bm)) => merge_into(am, bm),
        (_, Value::Bool(true)) => true,
        (Value::Bool(true), _) => {
            *a = b.clone();
            true
        }
        _ => false,
    }
}

/// Keep the tighter of two numeric bounds (`keep_a(a, b)` says `a` is tighter).
fn pick(a: &mut Value, b: &Value, keep_a: impl Fn(f64, f64) -> bool) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => {
            if !keep_a(x, y) {
                *a = b.clone();
            }
            true
        }
        _ => false,
    }
}
