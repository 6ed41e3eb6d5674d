//! The one walker of subschemas: every keyword whose value holds schemas, as the keyword
//! table ([`super::keywords`], its `holds` column) says — one schema, a list of them, or a map
//! of names to them. Every pass that descends into a schema (references collected or
//! renamed, objects closed, formats rewritten, keywords stripped, depths measured) asks this
//! module for the children and keeps no list of keywords of its own. It reads the table and
//! yields children; it must not decide what a pass does with them.

use super::keywords::{self, Holds, Keyword};
use serde_json::{Map, Value};

/// Where a subschema sits under its keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    /// The keyword's value is the schema.
    Whole,
    /// Under this name of a map.
    Name(&'a str),
    /// At this index of a list.
    Index(usize),
}

/// What `keyword` holds (an unknown keyword is an annotation: nothing).
pub fn holds(keyword: &str) -> Holds {
    keywords::lookup(keyword).map_or(Holds::Nothing, |k| k.holds)
}

/// The keyword's row when its value holds subschemas.
fn holder(keyword: &str) -> Option<Keyword> {
    keywords::lookup(keyword).filter(|k| k.holds != Holds::Nothing)
}

/// The direct subschemas of `schema`, in key order: each with its keyword's row and where it
/// sits. A value that is not the shape its keyword holds (a map that is not an object)
/// gives none; a one-schema keyword given a list (`items` before 2020-12) gives each member.
pub fn children(schema: &Map<String, Value>) -> Vec<(Keyword, Key<'_>, &Value)> {
    let mut out = Vec::new();
    for (k, v) in schema {
        let Some(row) = holder(k) else { continue };
        match (row.holds, v) {
            (Holds::Map, Value::Object(m)) => {
                out.extend(m.iter().map(|(n, s)| (row, Key::Name(n.as_str()), s)));
            }
            (Holds::List | Holds::Schema, Value::Array(a)) => {
                out.extend(a.iter().enumerate().map(|(i, s)| (row, Key::Index(i), s)));
            }
            (Holds::Schema, s) => out.push((row, Key::Whole, s)),
            _ => {}
        }
    }
    out
}

/// Call `f` on each direct subschema of `schema`, mutably, in key order, with its keyword's
/// row and where it sits (as [`children`]).
pub fn for_each_child_mut(
    schema: &mut Map<String, Value>,
    mut f: impl FnMut(Keyword, Key<'_>, &mut Value),
) {
    for (k, v) in schema.iter_mut() {
        let Some(row) = holder(k) else { continue };
        match (row.holds, v) {
            (Holds::Map, Value::Object(m)) => {
                m.iter_mut()
                    .for_each(|(n, s)| f(row, Key::Name(n.as_str()), s));
            }
            (Holds::List | Holds::Schema, Value::Array(a)) => {
                a.iter_mut()
                    .enumerate()
                    .for_each(|(i, s)| f(row, Key::Index(i), s));
            }
            (Holds::Schema, s) => f(row, Key::Whole, s),
            _ => {}
        }
    }
}

/// Call `f` on `schema` and every subschema under it, depth first, parents before children.
pub fn each_schema<'a>(schema: &'a Value, f: &mut impl FnMut(&'a Map<String, Value>)) {
    let Value::Object(m) = schema else { return };
    f(m);
    for (_, _, c) in children(m) {
        each_schema(c, f);
    }
}

#[cfg(test)]
mod tests;
