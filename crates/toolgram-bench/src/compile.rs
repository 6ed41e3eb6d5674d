//! `bench compile`: JSON-Schema coverage and correctness on MaskBench (the JSONSchemaBench
//! schemas with valid and invalid instances) or a JSON-Schema-Test-Suite draft, per subset:
//! schemas compiled, refused (by reason), valid instances accepted, invalid rejected, schemas
//! passing (compiled, every valid accepted, every invalid rejected), compile time p50/p99.
//!
//! The [`Target::Lark`] path is what the embedded engine runs: our keyword pass, then
//! llguidance's JSON grammar (toolgram's own schema grammar where llguidance refuses, as the
//! engine falls back), then the post-parse validator for keywords the grammar leaves out. The
//! IR targets ([`Target::Gbnf`], [`Target::LarkOpenai`]) are scored the same way by
//! `compile_gbnf.rs`.
//!
//! Measurements only: nothing here decides pass/fail of a test, and nothing here prints
//! (progress goes to a callback).

use super::compile_gbnf;
pub use super::compile_summary::{CompileSummary, SubsetRow};
use super::key_order::{KeyOrder, in_schema_order, policy_text};
use super::schema_result::unreadable;
pub use super::schema_result::{CompileProgress, SchemaDetail, SchemaResult};
use crate::BenchError;
use crate::datasets::{Instance, SchemaCase, maskbench, schema_suite};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;
use toolgram_core::compile::{KeywordPass, bare_grammar_schema};
use toolgram_engine::{ByteChecker, CompiledCheck};

/// The compiler a `bench compile` run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Keyword pass + llguidance's JSON grammar (what the embedded engine runs).
    Lark,
    /// Our schema → IR → GBNF, run by llama.cpp's grammar engine.
    Gbnf,
    /// Our schema → IR → OpenAI-dialect Lark, run by llguidance.
    LarkOpenai,
}

impl Target {
    /// Every target by its name on the command line.
    pub const NAMES: [(&str, Target); 3] = [
        ("lark", Target::Lark),
        ("gbnf", Target::Gbnf),
        ("lark-openai", Target::LarkOpenai),
    ];

    /// The target named `name` (`lark`, `gbnf`, `lark-openai`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
    }
}

/// How a `bench compile` run compiles and checks each schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileBenchOptions {
    /// The compiler measured.
    pub target: Target,
    /// Ignore unknown formats and keywords (each counted) instead of refusing the schema.
    pub lenient: bool,
    /// With [`Target::Gbnf`]: judge the GBNF llama.cpp's own converter wrote for each schema
    /// into this folder (`NAME.gbnf`, or `NAME.error` where it refused) instead of ours.
    pub peer_gbnf: Option<PathBuf>,
}

/// Compile and check every MaskBench file (see [`maskbench::files`]), in the files' order.
pub fn run_maskbench(
    files: &[PathBuf],
    opts: &CompileBenchOptions,
    progress: &mut dyn FnMut(CompileProgress),
) -> Result<Vec<SchemaResult>, BenchError> {
    if opts.peer_gbnf.is_some() && opts.target != Target::Gbnf {
        return Err(BenchError::Unsupported(
            "--peer-gbnf goes with --target gbnf".into(),
        ));
    }
    let peer = opts.peer_gbnf.as_deref();
    let emitter = match opts.target {
        Target::Gbnf => compile_gbnf::Emitter::Gbnf,
        Target::LarkOpenai => compile_gbnf::Emitter::LarkOpenai,
        Target::Lark => {
            let checker = ByteChecker::new()?;
            let mut results = Vec::with_capacity(files.len());
            for (i, f) in files.iter().enumerate() {
                let r = match maskbench::read(f) {
                    Some(case) => check_schema(&checker, &case, opts.lenient),
                    None => unreadable(f),
                };
                results.push(r);
                progress(CompileProgress::Checked {
                    done: i + 1,
                    total: files.len(),
                });
            }
            return Ok(results);
        }
    };
    compile_gbnf::results(files, opts.lenient, emitter, peer, progress)
}

/// Compile and check every group of a JSON-Schema-Test-Suite draft folder (the
/// [`Target::Lark`] path only).
pub fn run_suite(dir: &Path, opts: &CompileBenchOptions) -> Result<Vec<SchemaResult>, BenchError> {
    if opts.target != Target::Lark {
        return Err(BenchError::Unsupported(
            "--suite runs the lark target; use --data for --target gbnf|lark-openai".into(),
        ));
    }
    let checker = ByteChecker::new()?;
    Ok(schema_suite::read_dir(dir)?
        .iter()
        .map(|case| check_schema(&checker, case, opts.lenient))
        .collect())
}

/// The reason of a refusal, without llguidance's location prefix and instance details.
fn refusal_reason(message: &str) -> String {
    let m = message
        .split("failed to compile JSON schema: ")
        .nth(1)
        .unwrap_or(message);
    let m = m.lines().next().unwrap_or_default();
    // Keep the kind of failure, not the schema-specific value after it.
    let cut = m.find(": ").map_or(m.len(), |i| i.min(80));
    m[..cut.min(m.len())].to_owned()
}

/// Remove `format` values that neither the grammar nor the validator knows; their count.
fn drop_unknown_formats(v: &mut Value) -> usize {
    use toolgram_grammar::schema::keywords::{GRAMMAR_FORMATS, VALIDATOR_FORMATS};
    match v {
        Value::Object(m) => {
            let unknown = m
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !GRAMMAR_FORMATS.contains(&f) && !VALIDATOR_FORMATS.contains(&f));
            let here = usize::from(unknown && m.shift_remove("format").is_some());
            here + m.values_mut().map(drop_unknown_formats).sum::<usize>()
        }
        Value::Array(a) => a.iter_mut().map(drop_unknown_formats).sum(),
        _ => 0,
    }
}

/// The engine's fallback: the schema through toolgram's own compiler, as llguidance Lark;
/// the compiled grammar and whether any keyword is left to the validator.
fn ir_fallback(
    checker: &ByteChecker,
    schema: &Value,
    lenient: bool,
) -> Option<(CompiledCheck, bool)> {
    use toolgram_grammar::lark;
    use toolgram_grammar::schema::{NoteKind, SchemaOptions, to_grammar};
    let opts = SchemaOptions {
        lenient,
        ..SchemaOptions::default()
    };
    let (g, notes) = to_grammar(schema, &opts).ok()?;
    let compiled = checker
        .compile(&lark::emit(&g, lark::LarkDialect::Llguidance))
        .ok()?;
    Some((compiled, notes.iter().any(|n| n.kind == NoteKind::Deferred)))
}

/// Compile one schema and run its test instances through the grammar and the post-parse
/// validator.
fn check_schema(checker: &ByteChecker, case: &SchemaCase, lenient: bool) -> SchemaResult {
    let mut r = SchemaResult::new(case.subset.clone());
    let mut schema = case.schema.clone();
    if lenient {
        r.ignored_formats = drop_unknown_formats(&mut schema);
    }
    let mut pass = KeywordPass::default();
    let t0 = Instant::now();
    let grammar_schema = bare_grammar_schema(&schema, &mut pass);
    if let (false, Some(k)) = (lenient, pass.unknown.first()) {
        r.refused_by = Some(format!("unknown keyword `{}`", k.keyword));
        return r;
    }
    r.ignored_keywords = pass.unknown.len();
    let mut deferred = !pass.deferred.is_empty();
    let lark = format!("start: %json {grammar_schema}\n");
    // As the engine does: where llguidance's `%json` refuses, our own schema grammar.
    let compiled =
        checker
            .compile(&lark)
            .or_else(|e| match ir_fallback(checker, &schema, lenient) {
                Some((c, deferred_ir)) => {
                    r.ir_fallback = true;
                    deferred = deferred_ir;
                    Ok(c)
                }
                None => Err(e),
            });
    r.compile_ms = t0.elapsed().as_secs_f64() * 1e3;
    let compiled = match compiled {
        Ok(c) => c,
        Err(e) => {
            r.refused_by = Some(refusal_reason(&e.to_string()));
            return r;
        }
    };
    // Deferred keywords need the validator; a schema it cannot build is refused, not passed.
    let validator = match deferred
        .then(|| toolgram_core::define::arguments::post_parse_validator(&schema))
        .transpose()
    {
        Ok(v) => v,
        Err(e) => {
            r.refused_by = Some(format!("validator: {e}"));
            return r;
        }
    };
    r.compiled = true;
    for Instance { data, valid } in &case.tests {
        let by_grammar = checker.accepts(&compiled, &data.to_string());
        let by_validator = validator.as_ref().is_none_or(|v| v.is_valid(data));
        let accepted = by_grammar && by_validator;
        if *valid {
            r.valid.1 += 1;
            if accepted {
                r.valid.0 += 1;
            } else if !by_validator {
                r.validator_rejected += 1;
            } else if [KeyOrder::Keyword, KeyOrder::OwnFirst]
                .into_iter()
                .any(|order| {
                    let text = policy_text(&in_schema_order(data, &schema, &schema, 0, order));
                    checker.accepts(&compiled, &text)
                })
            {
                r.out_of_order_valid_rejected += 1;
            } else if r.valid_rejected_at.is_none() {
                r.valid_rejected_at = Some(checker.accepted_len(&compiled, &data.to_string()));
            }
        } else {
            r.invalid.1 += 1;
            if !accepted {
                r.invalid.0 += 1;
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_reason_keeps_the_kind() {
        let m = "at /x: failed to compile JSON schema: Unimplemented keys: [\"foo\"]\nmore";
        assert_eq!(refusal_reason(m), "Unimplemented keys");
        assert_eq!(refusal_reason("plain"), "plain");
    }

    #[test]
    fn lenient_drops_only_unknown_formats() {
        let mut s = serde_json::json!({"format": "color", "properties": {
            "a": {"format": "date-time"}, "b": {"format": "topic"}}});
        assert_eq!(drop_unknown_formats(&mut s), 2);
        assert!(s.get("format").is_none());
        assert_eq!(s["properties"]["a"]["format"], "date-time");
    }

    #[test]
    fn lark_target_scores_instances() {
        let Ok(checker) = ByteChecker::new() else {
            return;
        };
        let case = SchemaCase {
            subset: "t".into(),
            schema: serde_json::json!({"type": "object", "properties": {
                "a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}),
            tests: vec![
                Instance {
                    data: serde_json::json!({"a": 1, "b": "x"}),
                    valid: true,
                },
                // Keys out of schema order: a policy rejection, not a real one.
                Instance {
                    data: serde_json::json!({"b": "x", "a": 1}),
                    valid: true,
                },
                Instance {
                    data: serde_json::json!({"b": "x"}),
                    valid: false,
                },
            ],
        };
        let r = check_schema(&checker, &case, false);
        assert!(r.compiled, "{:?}", r.refused_by);
        assert_eq!(r.valid, (1, 2));
        assert_eq!(r.out_of_order_valid_rejected, 1);
        assert_eq!(r.invalid, (1, 1));
        assert!(r.passes());
        let unknown = SchemaCase {
            schema: serde_json::json!({"type": "string", "x-made-up": 1, "frobnicate": true}),
            ..case
        };
        let refused = check_schema(&checker, &unknown, false);
        assert!(!refused.compiled);
    }
}
