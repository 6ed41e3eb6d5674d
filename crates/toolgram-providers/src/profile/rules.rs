//! What each profile does with a keyword — kept, moved after the parse, an annotation kept or
//! dropped, rewritten by the renderer — read from THE keyword table (`toolgram-grammar`'s
//! `schema::keywords`, whose profile columns and format lists come from these sources), and
//! Anthropic's regex subset.
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
//! This module holds lookups only; it must not walk schemas (see `render.rs`) or keep a
//! keyword list of its own.

use super::Profile;
use toolgram_grammar::schema::keywords::{self, ProfileClass};

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
    /// Not a JSON-Schema keyword we know (BFCL's `optional`, a vendor key): an annotation, as
    /// JSON Schema says — left out of what the provider gets, never enforced, and noted.
    Unknown,
}

/// The column of `profile` in the keyword table.
fn column(profile: Profile) -> usize {
    match profile {
        Profile::OpenAiStrict => 0,
        Profile::Anthropic => 1,
        Profile::Gemini => 2,
    }
}

/// Classify `keyword` for `profile`, from the one keyword table.
pub(crate) fn classify(profile: Profile, keyword: &str) -> Class {
    match keywords::lookup(keyword).map(|k| k.profiles[column(profile)]) {
        Some(ProfileClass::Structural) => Class::Structural,
        Some(ProfileClass::Native) => Class::Native,
        Some(ProfileClass::KeptAnnotation) => Class::KeptAnnotation,
        Some(ProfileClass::DroppedAnnotation) => Class::DroppedAnnotation,
        Some(ProfileClass::Deferred) => Class::Deferred,
        None => Class::Unknown,
    }
}

/// Whether the profile enforces `format` value `f` on instances of JSON type `ty`.
pub(crate) fn format_supported(profile: Profile, ty: Option<&str>, f: &str) -> bool {
    match profile {
        Profile::OpenAiStrict => keywords::OPENAI_STRICT_FORMATS.contains(&f),
        Profile::Anthropic => keywords::ANTHROPIC_FORMATS.contains(&f),
        Profile::Gemini => ty.is_some_and(|t| keywords::GEMINI_FORMATS.contains(&(t, f))),
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

/// Gemini's documented parameter-name rule, applied at every level (the conservative reading).
pub(super) fn gemini_name_ok(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's profile columns are in the order [`column`] reads them.
    #[test]
    fn table_columns_are_the_profiles() {
        for p in Profile::ALL {
            assert_eq!(keywords::PROFILES[column(p)], p.name());
        }
    }
}
