//! The single table of JSON-Schema keywords: for each, how our schema → IR compiler treats
//! it, how the llguidance (`%json`) path treats it, and how each provider profile's subset
//! treats it; and the `format` lists (enforced by the grammar, checked after parsing, enforced
//! by each provider). Core's `compile`, [`crate::schema`] and the provider profiles all read
//! it; no other list of keywords may exist.
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

/// What a provider's JSON-Schema subset (a profile) does with a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileClass {
    /// Rewritten by the profile renderer itself (types, objects, arrays, composition,
    /// references, `enum`/`const`, `format`).
    Structural,
    /// An assertion the provider enforces: kept as written.
    Native,
    /// An annotation the provider documents: kept as written.
    KeptAnnotation,
    /// An annotation the provider does not document: removed with a note (it constrains
    /// nothing).
    DroppedAnnotation,
    /// An assertion the provider does not enforce: removed (which only widens the schema) and
    /// listed as enforced after parse by toolgram's validator.
    Deferred,
}

/// The provider profiles, in the order of [`Keyword::profiles`].
pub const PROFILES: [&str; 3] = ["openai-strict", "anthropic", "gemini"];

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
    /// How each provider profile treats it, in the order of [`PROFILES`] (sources in
    /// `toolgram-providers`' `profile/rules.rs`).
    pub profiles: [ProfileClass; 3],
}

const fn kw(
    name: &'static str,
    ours: Class,
    llguidance: Class,
    profiles: [ProfileClass; 3],
) -> Keyword {
    Keyword {
        name,
        ours,
        llguidance,
        profiles,
    }
}

use Class::{AfterParse as P, Annotation as A, Grammar as G};
use ProfileClass::{
    Deferred as L, DroppedAnnotation as D, KeptAnnotation as K, Native as N, Structural as S,
};

/// Every keyword toolgram knows. Keywords starting with `x-` are annotations too.
pub const KEYWORDS: &[Keyword] = &[
    kw("type", G, G, [S, S, S]),
    kw("properties", G, G, [S, S, S]),
    kw("required", G, G, [S, S, S]),
    kw("additionalProperties", G, G, [S, S, S]),
    kw("enum", G, G, [S, S, S]),
    kw("const", G, G, [S, S, S]),
    kw("anyOf", G, G, [S, S, S]),
    kw("oneOf", G, G, [S, S, S]),
    kw("allOf", G, G, [S, S, S]),
    kw("$ref", G, G, [S, S, S]),
    kw("$defs", G, G, [S, S, S]),
    kw("definitions", G, G, [S, S, S]),
    kw("items", G, G, [S, S, S]),
    kw("prefixItems", G, G, [L, L, L]),
    kw("additionalItems", G, G, [L, L, L]),
    kw("minItems", G, G, [N, N, N]),
    kw("maxItems", G, G, [N, L, N]),
    kw("minLength", G, G, [L, L, N]),
    kw("maxLength", G, G, [L, L, N]),
    kw("pattern", G, G, [N, N, N]),
    kw("format", G, G, [S, S, S]),
    kw("minimum", G, G, [N, L, N]),
    kw("maximum", G, G, [N, L, N]),
    kw("exclusiveMinimum", G, G, [N, L, L]),
    kw("exclusiveMaximum", G, G, [N, L, L]),
    kw("patternProperties", P, G, [S, S, S]),
    kw("multipleOf", P, G, [N, L, L]),
    kw("minProperties", P, G, [L, L, N]),
    kw("maxProperties", P, G, [L, L, N]),
    kw("uniqueItems", P, P, [L, L, L]),
    kw("contains", P, P, [L, L, L]),
    kw("minContains", P, P, [L, L, L]),
    kw("maxContains", P, P, [L, L, L]),
    kw("dependentRequired", P, P, [L, L, L]),
    kw("dependentSchemas", P, P, [L, L, L]),
    kw("dependencies", P, P, [L, L, L]),
    kw("propertyNames", P, P, [L, L, L]),
    kw("not", P, P, [L, L, L]),
    kw("if", P, P, [L, L, L]),
    kw("then", P, P, [L, L, L]),
    kw("else", P, P, [L, L, L]),
    kw("unevaluatedProperties", P, P, [L, L, L]),
    kw("unevaluatedItems", P, P, [L, L, L]),
    kw("title", A, G, [K, D, K]),
    kw("description", A, G, [K, K, K]),
    kw("default", A, G, [D, K, K]),
    kw("examples", A, G, [D, D, D]),
    kw("$schema", A, G, [D, D, D]),
    kw("$id", A, G, [D, D, D]),
    kw("id", A, G, [D, D, D]),
    kw("$comment", A, G, [D, D, D]),
    kw("$anchor", A, G, [D, D, D]),
    kw("readOnly", A, G, [D, D, D]),
    kw("writeOnly", A, G, [D, D, D]),
    kw("contentMediaType", A, G, [D, D, D]),
    kw("contentEncoding", A, G, [D, D, D]),
    kw("deprecated", A, A, [D, D, D]),
    kw("$vocabulary", A, A, [D, D, D]),
    kw("$dynamicAnchor", A, A, [D, D, D]),
    kw("contentSchema", A, A, [D, D, D]),
];

/// The row for `name` (`x-*` vendor extensions are annotations).
pub fn lookup(name: &str) -> Option<Keyword> {
    if name.starts_with("x-") {
        return Some(kw("x-*", A, A, [D, D, D]));
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

/// The `format` values OpenAI's strict mode enforces on strings.
pub const OPENAI_STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The `format` values Anthropic's strict mode enforces on strings.
pub const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The (JSON type, `format`) pairs Gemini documents: NUMBER float/double, INTEGER
/// int32/int64, STRING date-time.
pub const GEMINI_FORMATS: &[(&str, &str)] = &[
    ("string", "date-time"),
    ("number", "float"),
    ("number", "double"),
    ("integer", "int32"),
    ("integer", "int64"),
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
        assert_eq!(
            ann,
            [
                "deprecated",
                "$vocabulary",
                "$dynamicAnchor",
                "contentSchema"
            ]
        );
    }
}
