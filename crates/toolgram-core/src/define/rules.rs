//! Custom argument rules a tool declares next to its JSON Schema, for what a schema says
//! badly or a grammar cannot say at all: `mutually_exclusive`, `at_least_one_of`,
//! `exactly_one_of` and `dependent_required`, each over the properties of the arguments object
//! (or of a nested object named by a JSON pointer `at`).
//!
//! Declared in the function object as
//! `"x-toolgram": {"rules": [{"mutually_exclusive": ["city", "coordinates"]}, …]}`, read and
//! checked against the schema when the tool set is read ([`read_rules`]), checked after parsing
//! ([`ArgumentRule::check`]). This module must not change arguments or know about grammars.

use serde_json::{Map, Value};

/// What a rule requires of a set of properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleKind {
    /// At most one of them may be given.
    MutuallyExclusive(Vec<String>),
    /// At least one of them must be given.
    AtLeastOneOf(Vec<String>),
    /// Exactly one of them must be given.
    ExactlyOneOf(Vec<String>),
    /// When `property` is given, every one of `requires` must be given too.
    DependentRequired {
        /// The property that triggers the rule.
        property: String,
        /// What it needs.
        requires: Vec<String>,
    },
}

/// One declared rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentRule {
    /// JSON pointer (into the arguments) of the object the rule talks about; `""` for the
    /// arguments object itself.
    pub at: String,
    /// The rule.
    pub kind: RuleKind,
}

const KINDS: &str = "mutually_exclusive, at_least_one_of, exactly_one_of, dependent_required";

/// Read the `rules` array of a tool's `x-toolgram` object, checking every named property
/// against `parameters`. Errors are `(pointer relative to the rules array, message)`.
pub fn read_rules(
    rules: &Value,
    parameters: &Value,
) -> Result<Vec<ArgumentRule>, (String, String)> {
    let items = rules
        .as_array()
        .ok_or_else(|| (String::new(), "`rules` must be an array".to_owned()))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| read_rule(item, parameters).map_err(|(p, m)| (format!("/{i}{p}"), m)))
        .collect()
}

fn read_rule(item: &Value, parameters: &Value) -> Result<ArgumentRule, (String, String)> {
    let obj = item.as_object().ok_or_else(|| {
        (
            String::new(),
            format!("a rule must be an object with one of {KINDS}"),
        )
    })?;
    let at = match obj.get("at") {
        None => String::new(),
        Some(Value::String(p)) if p.is_empty() || p.starts_with('/') => p.clone(),
        Some(_) => {
            return Err((
                "/at".into(),
                "`at` must be a JSON pointer into the arguments, like \"/filters\"".into(),
            ));
        }
    };
    let mut kinds = obj.iter().filter(|(k, _)| k.as_str() != "at");
    let (Some((key, body)), None) = (kinds.next(), kinds.next()) else {
        return Err((
            String::new(),
            format!("a rule must have exactly one of {KINDS}"),
        ));
    };
    let here = format!("/{key}");
    let kind = match key.as_str() {
        "mutually_exclusive" => {
            RuleKind::MutuallyExclusive(names(body, 2).map_err(|m| (here.clone(), m))?)
        }
        "at_least_one_of" => RuleKind::AtLeastOneOf(names(body, 2).map_err(|m| (here.clone(), m))?),
        "exactly_one_of" => RuleKind::ExactlyOneOf(names(body, 2).map_err(|m| (here.clone(), m))?),
        "dependent_required" => {
            let map = body.as_object().filter(|m| m.len() == 1).ok_or_else(|| {
                (
                    here.clone(),
                    "`dependent_required` must be one `{\"property\": [\"needed\", …]}`".to_owned(),
                )
            })?;
            let Some((property, needs)) = map.iter().next() else {
                return Err((here, "`dependent_required` is empty".into()));
            };
            RuleKind::DependentRequired {
                property: property.clone(),
                requires: names(needs, 1).map_err(|m| (format!("{here}/{property}"), m))?,
            }
        }
        other => {
            return Err((
                format!("/{other}"),
                format!("unknown rule `{other}`; the rules are {KINDS}"),
            ));
        }
    };
    let rule = ArgumentRule { at, kind };
    check_against_schema(&rule, parameters).map_err(|m| (String::new(), m))?;
    Ok(rule)
}

fn names(v: &Value, min: usize) -> Result<Vec<String>, String> {
    let list: Option<Vec<String>> = v
        .as_array()
        .map(|a| a.iter().map(|n| n.as_str().map(str::to_owned)).collect())
        .unwrap_or(None);
    match list {
        Some(l) if l.len() >= min => Ok(l),
        _ => Err(format!(
            "expected an array of at least {min} property name(s)"
        )),
    }
}

/// The schema of the object at `at`, following `properties` (and `items` for array indices).
fn schema_at<'s>(parameters: &'s Value, at: &str) -> Option<&'s Value> {
    let mut s = parameters;
    for part in at.split('/').skip(1) {
        let part = toolgram_grammar::schema::refs::unescape_token(part);
        s = match s.get("properties").and_then(|p| p.get(&part)) {
            Some(next) => next,
            None if part.parse::<usize>().is_ok() => s.get("items")?,
            None => return None,
        };
    }
    Some(s)
}

fn check_against_schema(rule: &ArgumentRule, parameters: &Value) -> Result<(), String> {
    let schema = schema_at(parameters, &rule.at).ok_or_else(|| {
        format!(
            "`at` {:?} names no object in the parameters schema",
            rule.at
        )
    })?;
    let declared = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for name in rule.kind.names() {
        if let Some(props) = declared
            && !props.contains_key(name)
        {
            return Err(format!(
                "the rule names '{name}', which is not a declared property"
            ));
        }
    }
    match &rule.kind {
        RuleKind::MutuallyExclusive(n) | RuleKind::ExactlyOneOf(n) => {
            let both: Vec<&String> = n
                .iter()
                .filter(|p| required.contains(&p.as_str()))
                .collect();
            if both.len() > 1 {
                return Err(format!(
                    "'{}' and '{}' are both required by the schema, so no call could satisfy this rule",
                    both[0], both[1]
                ));
            }
        }
        RuleKind::AtLeastOneOf(_) | RuleKind::DependentRequired { .. } => {}
    }
    Ok(())
}

impl RuleKind {
    /// Every property the rule names.
    pub fn names(&self) -> Vec<&str> {
        match self {
            RuleKind::MutuallyExclusive(n)
            | RuleKind::AtLeastOneOf(n)
            | RuleKind::ExactlyOneOf(n) => n.iter().map(String::as_str).collect(),
            RuleKind::DependentRequired { property, requires } => std::iter::once(property)
                .chain(requires)
                .map(String::as_str)
                .collect(),
        }
    }
}

impl ArgumentRule {
    /// The rule as one sentence for the model (appended to the tool's description).
    pub fn describe(&self) -> String {
        let list = |n: &[String]| n.join(", ");
        let at = if self.at.is_empty() {
            String::new()
        } else {
            format!(" (in {})", dotted(&self.at))
        };
        match &self.kind {
            RuleKind::MutuallyExclusive(n) => format!("Give at most one of: {}{at}.", list(n)),
            RuleKind::AtLeastOneOf(n) => format!("Give at least one of: {}{at}.", list(n)),
            RuleKind::ExactlyOneOf(n) => format!("Give exactly one of: {}{at}.", list(n)),
            RuleKind::DependentRequired { property, requires } => {
                format!("When giving {property}, also give: {}{at}.", list(requires))
            }
        }
    }

    /// Check the arguments of a call to `tool`; `None` when the rule holds (or the object it
    /// talks about is absent: whether it must exist is the schema's business).
    pub fn check(&self, tool: &str, arguments: &Value) -> Option<String> {
        let obj = arguments.pointer(&self.at)?.as_object()?;
        let prefix = if self.at.is_empty() {
            String::new()
        } else {
            format!("{}.", dotted(&self.at))
        };
        let quoted = |n: &[&String]| {
            n.iter()
                .map(|p| format!("'{prefix}{p}'"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &self.kind {
            RuleKind::MutuallyExclusive(n) => {
                let given = present(obj, n);
                (given.len() > 1).then(|| {
                    format!(
                        "{} cannot be given together for tool '{tool}'; give only one",
                        quoted(&given)
                    )
                })
            }
            RuleKind::AtLeastOneOf(n) => present(obj, n).is_empty().then(|| {
                format!(
                    "tool '{tool}' needs at least one of {}",
                    quoted(&n.iter().collect::<Vec<_>>())
                )
            }),
            RuleKind::ExactlyOneOf(n) => {
                let given = present(obj, n);
                match given.len() {
                    1 => None,
                    0 => Some(format!(
                        "tool '{tool}' needs exactly one of {}",
                        quoted(&n.iter().collect::<Vec<_>>())
                    )),
                    _ => Some(format!(
                        "{} cannot be given together for tool '{tool}'; give exactly one",
                        quoted(&given)
                    )),
                }
            }
            RuleKind::DependentRequired { property, requires } => {
                if !obj.contains_key(property) {
                    return None;
                }
                let missing: Vec<&String> =
                    requires.iter().filter(|r| !obj.contains_key(*r)).collect();
                (!missing.is_empty()).then(|| {
                    format!(
                        "{} required when '{prefix}{property}' is given for tool '{tool}'",
                        if missing.len() == 1 {
                            format!("{} is", quoted(&missing))
                        } else {
                            format!("{} are", quoted(&missing))
                        }
                    )
                })
            }
        }
    }
}

/// Properties of `names` present in `obj`; `null` counts as absent (the OpenAI-strict profile
/// sends optional properties as `null`).
fn present<'n>(obj: &Map<String, Value>, names: &'n [String]) -> Vec<&'n String> {
    names
        .iter()
        .filter(|n| obj.get(*n).is_some_and(|v| !v.is_null()))
        .collect()
}

fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params() -> Value {
        json!({"type": "object", "properties": {
            "city": {"type": "string"}, "coordinates": {"type": "string"},
            "return_date": {"type": "string"}, "departure_date": {"type": "string"},
            "filters": {"type": "object", "properties": {"min": {"type": "number"}, "max": {"type": "number"}}}
        }, "required": ["departure_date"]})
    }

    fn rule(v: Value) -> ArgumentRule {
        read_rules(&json!([v]), &params())
            .expect("valid rule")
            .remove(0)
    }

    #[test]
    fn each_rule_reports_in_words_for_the_model() {
        let ex = rule(json!({"mutually_exclusive": ["city", "coordinates"]}));
        assert_eq!(ex.check("w", &json!({"city": "Paris"})), None);
        assert_eq!(
            ex.check("w", &json!({"city": "Paris", "coordinates": null})),
            None
        );
        assert_eq!(
            ex.check("w", &json!({"city": "Paris", "coordinates": "1,2"}))
                .as_deref(),
            Some("'city', 'coordinates' cannot be given together for tool 'w'; give only one")
        );
        let one = rule(json!({"at_least_one_of": ["city", "coordinates"]}));
        assert_eq!(
            one.check("w", &json!({})).as_deref(),
            Some("tool 'w' needs at least one of 'city', 'coordinates'")
        );
        assert_eq!(one.check("w", &json!({"coordinates": "1,2"})), None);
        let exactly = rule(json!({"exactly_one_of": ["city", "coordinates"]}));
        assert!(exactly.check("w", &json!({})).is_some());
        assert!(
            exactly
                .check("w", &json!({"city": "a", "coordinates": "b"}))
                .is_some()
        );
        assert_eq!(exactly.check("w", &json!({"city": "a"})), None);
        let dep = rule(json!({"dependent_required": {"return_date": ["departure_date"]}}));
        assert_eq!(
            dep.check("book", &json!({"return_date": "2026-12-01"}))
                .as_deref(),
            Some("'departure_date' is required when 'return_date' is given for tool 'book'")
        );
        assert_eq!(dep.check("book", &json!({"departure_date": "x"})), None);
    }

    #[test]
    fn nested_rules_name_the_full_path() {
        let r = rule(json!({"at": "/filters", "at_least_one_of": ["min", "max"]}));
        assert_eq!(
            r.check("s", &json!({"filters": {}})).as_deref(),
            Some("tool 's' needs at least one of 'filters.min', 'filters.max'")
        );
        assert_eq!(
            r.check("s", &json!({})),
            None,
            "absent object: the schema decides"
        );
        assert_eq!(r.describe(), "Give at least one of: min, max (in filters).");
    }

    #[test]
    fn bad_declarations_are_refused_with_a_pointer() {
        let err = |v: Value| read_rules(&v, &params()).expect_err("refused");
        assert_eq!(
            err(json!([{"mutually_exclusive": ["city", "nope"]}])).0,
            "/0"
        );
        assert!(
            err(json!([{"mutually_exclusive": ["city", "nope"]}]))
                .1
                .contains("'nope'")
        );
        assert_eq!(err(json!([{"one_of": ["city"]}])).0, "/0/one_of");
        assert_eq!(
            err(json!([{"at_least_one_of": ["city"]}])).0,
            "/0/at_least_one_of"
        );
        assert!(
            err(json!([{"at": "/nowhere", "at_least_one_of": ["a", "b"]}]))
                .1
                .contains("nowhere")
        );
        assert!(err(json!({"rules": 1})).1.contains("array"));
        let both_required =
            json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]});
        assert!(
            read_rules(&json!([{"mutually_exclusive": ["a", "b"]}]), &both_required)
                .expect_err("contradiction")
                .1
                .contains("both required")
        );
    }
}
