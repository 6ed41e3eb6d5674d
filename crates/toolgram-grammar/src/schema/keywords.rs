//! The single table of JSON-Schema keywords: for each, how our schema → IR compiler treats
//! it and how the llguidance (`%json`) path treats it; and the two `format` lists (enforced by
//! the grammar, checked after parsing). Core's `compile` and [`crate::schema`] both read it;
//! no other list of keywords may exist.
//!
//! This module holds data only; it must not walk schemas.

/// How a keyword is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The grammar enforces it (where a case is not expressible, e.g. a look-around
    /// `pattern`, the grammar is widened and the keyword is listed as deferred).
    Grammar,
    /// The grammar admits a superset; the `jsonschema` validator enforces it after parsing.
    AfterParse,
    /// Constrains nothing: ignored.
    Annotation,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Keyword {
    /// The keyword.
    pub name: &'static str,
    /// How `schema::to_grammar` (GBNF and OpenAI-Lark targets) treats it.
    pub ours: Class,
    /// How the llguidance `%json` path treats it: `AfterParse` keywords are stripped from
    /// the grammar schema and listed; `Annotation` ones that llguidance does not know are
    /// stripped silently; `Grammar` ones are left to llguidance.
    pub llguidance: Class,
}

const fn kw(name: &'static str, ours: Class, llguidance: Class) -> Keyword {
    Keyword {
        name,
        ours,
        llguidance,
    }
}

use Class::{AfterParse as P, Annotation as A, Grammar as G};

/// Every keyword toolgram knows. Keywords starting with `x-` are annotations too.
pub const KEYWORDS: &[Keyword] = &[
    kw("type", G, G),
    kw("properties", G, G),
    kw("required", G, G),
    kw("additionalProperties", G, G),
    kw("enum", G, G),
    kw("const", G, G),
    kw("anyOf", G, G),
    kw("oneOf", G, G),
    kw("allOf", G, G),
    kw("$ref", G, G),
    kw("$defs", G, G),
    kw("definitions", G, G),
    kw("items", G, G),
    kw("prefixItems", G, G),
    kw("additionalItems", G, G),
    kw("minItems", G, G),
    kw("maxItems", G, G),
    kw("minLength", G, G),
    kw("maxLength", G, G),
    kw("pattern", G, G),
    kw("format", G, G),
    kw("minimum", G, G),
    kw("maximum", G, G),
    kw("exclusiveMinimum", G, G),
    kw("exclusiveMaximum", G, G),
    kw("patternProperties", P, G),
    kw("multipleOf", P, G),
    kw("minProperties", P, G),
    kw("maxProperties", P, G),
    kw("uniqueItems", P, P),
    kw("contains", P, P),
    kw("minContains", P, P),
    kw("maxContains", P, P),
    kw("dependentRequired", P, P),
    kw("dependentSchemas", P, P),
    kw("dependencies", P, P),
    kw("propertyNames", P, P),
    kw("not", P, P),
    kw("if", P, P),
    kw("then", P, P),
    kw("else", P, P),
    kw("unevaluatedProperties", P, P),
    kw("unevaluatedItems", P, P),
    kw("title", A, G),
    kw("description", A, G),
    kw("default", A, G),
    kw("examples", A, G),
    kw("$schema", A, G),
    kw("$id", A, G),
    kw("id", A, G),
    kw("$comment", A, G),
    kw("$anchor", A, G),
    kw("readOnly", A, G),
    kw("writeOnly", A, G),
    kw("contentMediaType", A, G),
    kw("contentEncoding", A, G),
    kw("deprecated", A, A),
    kw("$vocabulary", A, A),
    kw("$dynamicAnchor", A, A),
];

/// The row for `name` (`x-*` vendor extensions are annotations).
pub fn lookup(name: &str) -> Option<Keyword> {
    if name.starts_with("x-") {
        return Some(kw("x-*", A, A));
    }
    KEYWORDS.iter().find(|k| k.name == name).copied()
}

/// Keywords the llguidance path strips and the validator enforces after parsing.
pub fn llguidance_after_parse() -> impl Iterator<Item = &'static str> {
    KEYWORDS
        .iter()
        .filter(|k| k.llguidance == Class::AfterParse)
        .map(|k| k.name)
}

/// Annotations the llguidance path strips because llguidance does not know them.
pub fn llguidance_unknown_annotations() -> impl Iterator<Item = &'static str> {
    KEYWORDS
        .iter()
        .filter(|k| k.llguidance == Class::Annotation)
        .map(|k| k.name)
}

/// The `format` values the grammar enforces (llguidance's built-in formats); any other
/// format is checked after parsing by the validator when it knows it.
pub const GRAMMAR_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
    "uri",
];

/// Further formats the post-parse validator (`jsonschema`) checks: the grammar leaves them
/// out and the validator enforces them. A format in neither list is refused by the compiler.
pub const VALIDATOR_FORMATS: &[&str] = &[
    "idn-email",
    "idn-hostname",
    "iri",
    "iri-reference",
    "json-pointer",
    "regex",
    "relative-json-pointer",
    "uri-reference",
    "uri-template",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_keyword_appears_once() {
        let mut names: Vec<&str> = KEYWORDS.iter().map(|k| k.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn the_llguidance_lists_match_what_compile_rs_used_to_hard_code() {
        let after: Vec<&str> = llguidance_after_parse().collect();
        assert_eq!(
            after,
            [
                "uniqueItems",
                "contains",
                "minContains",
                "maxContains",
                "dependentRequired",
                "dependentSchemas",
                "dependencies",
                "propertyNames",
                "not",
                "if",
                "then",
                "else",
                "unevaluatedProperties",
                "unevaluatedItems"
            ]
        );
        let ann: Vec<&str> = llguidance_unknown_annotations().collect();
        assert_eq!(ann, ["deprecated", "$vocabulary", "$dynamicAnchor"]);
    }
}
