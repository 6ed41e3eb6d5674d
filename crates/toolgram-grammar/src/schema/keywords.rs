//! The single table of JSON-Schema keywords: for each, how our schema → IR compiler treats
//! it, how the llguidance (`%json`) path treats it, and how each provider profile's subset
//! treats it; and the `format` lists (enforced by the grammar, checked after parsing, enforced
//! by each provider). Core's `compile`, [`crate::schema`] and the provider profiles all read
//! it; no other list of keywords may exist.
//!
//! Each row also says which subschemas the keyword's value holds (the one walker,
//! [`super::walk`], reads that) and what they apply to (values inside the instance,
//! definitions, the instance itself beside, instead of, under a condition, or against the
//! holder), and which instance types the keyword constrains.
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

/// What a keyword's value holds: the subschemas the walker ([`super::walk`]) visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Data (a number, a string, a list of names, a value): no subschema.
    Nothing,
    /// One schema (`items` in drafts before 2020-12 may be a list of them, read as such).
    Schema,
    /// A list of schemas.
    List,
    /// A map of names (properties, patterns, definitions) to schemas.
    Map,
}

/// What a keyword's subschemas apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// Values inside the instance: properties, items, property names (or nothing, for a
    /// keyword that holds no subschema).
    Child,
    /// Nothing by themselves: definitions reached through `$ref`.
    Definition,
    /// The instance itself, always, beside the holder (`allOf`).
    Conjunct,
    /// The instance itself, one of them (`anyOf`, `oneOf`).
    Alternative,
    /// The instance itself, when a condition holds (`if`/`then`/`else`, `dependentSchemas`).
    Conditional,
    /// The instance itself, which must not match (`not`).
    Negated,
    /// The instance's decoded content (`contentSchema`): an annotation here.
    Content,
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
    /// The subschemas its value holds.
    pub holds: Holds,
    /// What those subschemas apply to.
    pub applies: Applies,
    /// Whether it says which keys an object may have besides its `properties`
    /// (`additionalProperties`, `patternProperties`, `unevaluatedProperties`): an object schema
    /// with one is left as it is by the tool-call policy that closes objects.
    pub other_keys: bool,
    /// The instance types it constrains (empty: every type). A schema with several types
    /// splits its keywords by this; an untyped schema with a grammar-enforced keyword for
    /// one type is not "any value".
    pub on: &'static [&'static str],
}

impl Keyword {
    /// Holding `holds` subschemas, which apply as `applies` says.
    const fn holds(self, holds: Holds, applies: Applies) -> Self {
        Self {
            holds,
            applies,
            ..self
        }
    }

    /// Whether its subschemas apply to the instance itself alongside the schema holding them
    /// (`allOf`; `if`/`then`/`else`, `dependentSchemas` when they hold): they may add what the
    /// holder does not list, so a pass that closes objects leaves both open.
    pub fn alongside(&self) -> bool {
        matches!(self.applies, Applies::Conjunct | Applies::Conditional)
    }

    /// Saying which other keys an object may have.
    const fn other_keys(self) -> Self {
        Self {
            other_keys: true,
            ..self
        }
    }

    /// Constraining values of the types `on` only.
    const fn on(self, on: &'static [&'static str]) -> Self {
        Self { on, ..self }
    }

    /// Whether its value is a map of definitions, reached only through `$ref` (`$defs`,
    /// `definitions`).
    pub fn holds_definitions(&self) -> bool {
        self.applies == Applies::Definition
    }

    /// Whether it constrains values of type `t` (`integer` counts as a number type).
    pub fn applies_to(&self, t: &str) -> bool {
        self.on.is_empty() || self.on.contains(&t)
    }
}

const STRING: &[&str] = &["string"];
const NUMBER: &[&str] = &["number", "integer"];
const STRING_OR_NUMBER: &[&str] = &["string", "number", "integer"];
const ARRAY: &[&str] = &["array"];
const OBJECT: &[&str] = &["object"];
use Applies::{
    Alternative as ALTERNATIVE, Child as CHILD, Conditional as CONDITIONAL, Conjunct as CONJUNCT,
    Content as CONTENT, Definition as DEFINITION, Negated as NEGATED,
};
use Holds::{List as LIST, Map as MAP, Schema as SCHEMA};

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
        holds: Holds::Nothing,
        applies: Applies::Child,
        other_keys: false,
        on: &[],
    }
}

use Class::{AfterParse as P, Annotation as A, Grammar as G};
use ProfileClass::{
    Deferred as L, DroppedAnnotation as D, KeptAnnotation as K, Native as N, Structural as S,
};

/// Every keyword toolgram knows. Keywords starting with `x-` are annotations too.
pub const KEYWORDS: &[Keyword] = &[
    kw("type", G, G, [S, S, S]),
    kw("properties", G, G, [S, S, S])
        .holds(MAP, CHILD)
        .on(OBJECT),
    kw("required", G, G, [S, S, S]).on(OBJECT),
    kw("additionalProperties", G, G, [S, S, S])
        .holds(SCHEMA, CHILD)
        .other_keys()
        .on(OBJECT),
    kw("enum", G, G, [S, S, S]),
    kw("const", G, G, [S, S, S]),
    kw("anyOf", G, G, [S, S, S]).holds(LIST, ALTERNATIVE),
    kw("oneOf", G, G, [S, S, S]).holds(LIST, ALTERNATIVE),
    kw("allOf", G, G, [S, S, S]).holds(LIST, CONJUNCT),
    kw("$ref", G, G, [S, S, S]),
    kw("$defs", G, G, [S, S, S]).holds(MAP, DEFINITION),
    kw("definitions", G, G, [S, S, S]).holds(MAP, DEFINITION),
    kw("items", G, G, [S, S, S]).holds(SCHEMA, CHILD).on(ARRAY),
    kw("prefixItems", G, G, [L, L, L])
        .holds(LIST, CHILD)
        .on(ARRAY),
    kw("additionalItems", G, G, [L, L, L])
        .holds(SCHEMA, CHILD)
        .on(ARRAY),
    kw("minItems", G, G, [N, N, N]).on(ARRAY),
    kw("maxItems", G, G, [N, L, N]).on(ARRAY),
    kw("minLength", G, G, [L, L, N]).on(STRING),
    kw("maxLength", G, G, [L, L, N]).on(STRING),
    kw("pattern", G, G, [N, N, N]).on(STRING),
    kw("format", G, G, [S, S, S]).on(STRING_OR_NUMBER),
    kw("minimum", G, G, [N, L, N]).on(NUMBER),
    kw("maximum", G, G, [N, L, N]).on(NUMBER),
    kw("exclusiveMinimum", G, G, [N, L, L]).on(NUMBER),
    kw("exclusiveMaximum", G, G, [N, L, L]).on(NUMBER),
    kw("patternProperties", P, G, [S, S, S])
        .holds(MAP, CHILD)
        .other_keys()
        .on(OBJECT),
    kw("multipleOf", P, G, [N, L, L]).on(NUMBER),
    kw("minProperties", P, G, [L, L, N]).on(OBJECT),
    kw("maxProperties", P, G, [L, L, N]).on(OBJECT),
    kw("uniqueItems", P, P, [L, L, L]).on(ARRAY),
    kw("contains", P, P, [L, L, L])
        .holds(SCHEMA, CHILD)
        .on(ARRAY),
    kw("minContains", P, P, [L, L, L]).on(ARRAY),
    kw("maxContains", P, P, [L, L, L]).on(ARRAY),
    kw("dependentRequired", P, P, [L, L, L]).on(OBJECT),
    kw("dependentSchemas", P, P, [L, L, L])
        .holds(MAP, CONDITIONAL)
        .on(OBJECT),
    kw("dependencies", P, P, [L, L, L])
        .holds(MAP, CONDITIONAL)
        .on(OBJECT),
    kw("propertyNames", P, P, [L, L, L])
        .holds(SCHEMA, CHILD)
        .on(OBJECT),
    kw("not", P, P, [L, L, L]).holds(SCHEMA, NEGATED),
    kw("if", P, P, [L, L, L]).holds(SCHEMA, CONDITIONAL),
    kw("then", P, P, [L, L, L]).holds(SCHEMA, CONDITIONAL),
    kw("else", P, P, [L, L, L]).holds(SCHEMA, CONDITIONAL),
    kw("unevaluatedProperties", P, P, [L, L, L])
        .holds(SCHEMA, CHILD)
        .other_keys()
        .on(OBJECT),
    kw("unevaluatedItems", P, P, [L, L, L])
        .holds(SCHEMA, CHILD)
        .on(ARRAY),
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
    kw("contentSchema", A, A, [D, D, D]).holds(SCHEMA, CONTENT),
];

/// The row for `name` (`x-*` vendor extensions are annotations).
pub fn lookup(name: &str) -> Option<Keyword> {
    if name.starts_with("x-") {
        return Some(kw("x-*", A, A, [D, D, D]));
    }
    KEYWORDS.iter().find(|k| k.name == name).copied()
}

/// The names of the keywords whose row passes `keep`, in table order.
fn names(keep: fn(&Keyword) -> bool) -> impl Iterator<Item = &'static str> {
    KEYWORDS.iter().filter(move |k| keep(k)).map(|k| k.name)
}

/// The keywords whose value is a map of definitions reached through `$ref` (`$defs`, then
/// the older drafts' `definitions`).
pub fn definition_containers() -> impl Iterator<Item = &'static str> {
    names(Keyword::holds_definitions)
}

/// The keywords whose subschemas are alternatives: the instance matches one of them (`anyOf`,
/// then `oneOf`).
pub fn alternatives() -> impl Iterator<Item = &'static str> {
    names(|k| k.applies == Applies::Alternative)
}

/// Keywords the llguidance path strips and the validator enforces after parsing.
pub fn llguidance_after_parse() -> impl Iterator<Item = &'static str> {
    names(|k| k.llguidance == Class::AfterParse)
}

/// Annotations the llguidance path strips because llguidance does not know them.
pub fn llguidance_unknown_annotations() -> impl Iterator<Item = &'static str> {
    names(|k| k.llguidance == Class::Annotation)
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

    /// The names other passes read from the table keep the order they relied on.
    #[test]
    fn derived_name_lists_are_in_the_order_passes_read_them() {
        assert_eq!(alternatives().collect::<Vec<_>>(), ["anyOf", "oneOf"]);
        assert_eq!(
            definition_containers().collect::<Vec<_>>(),
            ["$defs", "definitions"]
        );
        let closing_stays_open: Vec<&str> = KEYWORDS
            .iter()
            .filter(|k| k.alongside())
            .map(|k| k.name)
            .collect();
        assert_eq!(
            closing_stays_open,
            [
                "allOf",
                "dependentSchemas",
                "dependencies",
                "if",
                "then",
                "else"
            ]
        );
    }

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
