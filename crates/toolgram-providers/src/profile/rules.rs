//! The per-provider keyword tables: which JSON-Schema keywords each profile keeps, which it
//! moves after the parse, which annotations it drops, and which formats it knows.
//!
//! Sources (read 2026-11):
//! - OpenAI, Structured Outputs, "Supported schemas":
//!   <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>
//! - Anthropic, Structured outputs, "JSON Schema limitations":
//!   <https://docs.claude.com/en/docs/build-with-claude/structured-outputs>
//! - Gemini API, `Schema` object: <https://ai.google.dev/api/caching#Schema> and function
//!   calling: <https://ai.google.dev/gemini-api/docs/function-calling>
//!
//! Not every official page could be read from here: the OpenAI limits match the brief and a
//! third-party copy of the docs' limits table; Anthropic's unsupported list and its pool
//! limits (20 strict tools, 24 optional and 16 union-typed parameters) come from summaries
//! that cite the Anthropic page (e.g. the LangSchema Anthropic converter docs); Gemini's
//! fields are those of the generated `Schema` client types (v1beta). Re-check them against the
//! live pages when a provider rejects a schema this module produced.
//!
//! This module holds data and lookups only; it must not walk schemas (see `render.rs`) and it
//! is independent of the compiler's own keyword policy in `compile.rs`.

use super::Profile;

/// What a profile does with one keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// The provider enforces it: kept as written.
    Native,
    /// An annotation the provider documents: kept as written.
    KeptAnnotation,
    /// An annotation the provider does not document: removed, with a note (it constrains
    /// nothing, so nothing is enforced later).
    DroppedAnnotation,
    /// An assertion the provider does not enforce: removed (which only widens the schema) and
    /// listed as enforced after parse by toolgram's validator.
    Deferred,
    /// Handled by the renderer itself (types, objects, arrays, composition, references).
    Structural,
    /// Not a JSON-Schema keyword we know: an error, never a guess.
    Unknown,
}

/// Keywords the renderer rewrites itself.
const STRUCTURAL: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "enum",
    "const",
    "format",
];

/// Annotations of JSON Schema (and `x-*` vendor extensions): they constrain nothing.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
];

/// Assertions toolgram's `jsonschema` validator enforces; removing one only widens a schema.
const ASSERTIONS: &[&str] = &[
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
];

/// OpenAI strict: "Supported properties" (string, number, array keywords).
const OPENAI_NATIVE: &[&str] = &[
    "pattern",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];
/// Anthropic strict: `pattern` (a regex subset, checked by [`anthropic_pattern_ok`]) and
/// `minItems` of 0 or 1 only (checked by the renderer).
const ANTHROPIC_NATIVE: &[&str] = &["pattern", "minItems"];
/// Gemini: the assertion fields of its `Schema` object.
const GEMINI_NATIVE: &[&str] = &[
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
];

/// Classify `keyword` for `profile`.
pub(crate) fn classify(profile: Profile, keyword: &str) -> Class {
    if STRUCTURAL.contains(&keyword) {
        return Class::Structural;
    }
    if ANNOTATIONS.contains(&keyword) || keyword.starts_with("x-") {
        let kept: &[&str] = match profile {
            Profile::OpenAiStrict => &["title", "description"],
            Profile::Anthropic => &["description", "default"],
            Profile::Gemini => &["title", "description", "default"],
        };
        return if kept.contains(&keyword) {
            Class::KeptAnnotation
        } else {
            Class::DroppedAnnotation
        };
    }
    if ASSERTIONS.contains(&keyword) {
        let native = match profile {
            Profile::OpenAiStrict => OPENAI_NATIVE,
            Profile::Anthropic => ANTHROPIC_NATIVE,
            Profile::Gemini => GEMINI_NATIVE,
        };
        return if native.contains(&keyword) {
            Class::Native
        } else {
            Class::Deferred
        };
    }
    Class::Unknown
}

/// Whether the profile enforces `format` value `f` on instances of JSON type `ty`.
pub(crate) fn format_supported(profile: Profile, ty: Option<&str>, f: &str) -> bool {
    match profile {
        Profile::OpenAiStrict => [
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uuid",
        ]
        .contains(&f),
        Profile::Anthropic => [
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
        ]
        .contains(&f),
        // Gemini documents: NUMBER float/double, INTEGER int32/int64, STRING enum/date-time.
        Profile::Gemini => matches!(
            (ty, f),
            (Some("string"), "date-time")
                | (Some("number"), "float" | "double")
                | (Some("integer"), "int32" | "int64")
        ),
    }
}

/// Anthropic's regex subset: no backreferences, lookaround or word boundaries. Conservative:
/// any of those spellings (even escaped inside a class) makes the pattern deferred.
pub(crate) fn anthropic_pattern_ok(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    let lookaround = ["(?=", "(?!", "(?<=", "(?<!"];
    if lookaround.iter().any(|l| pattern.contains(l)) {
        return false;
    }
    !bytes.windows(2).any(|w| {
        w[0] == b'\\' && (w[1] == b'b' || w[1] == b'B' || w[1].is_ascii_digit() && w[1] != b'0')
    })
}
