//! `bench compile --target gbnf|lark-openai`: the same MaskBench measure for toolgram's own
//! schema → IR emitters. GBNF: every instance run through llama.cpp's real grammar engine (in
//! child processes, so an abort counts as a failure of that schema, not of the run). OpenAI
//! Lark (the dialect OpenAI's custom tools take): compiled and run by llguidance, an engine
//! independent of our IR. Then the post-parse validator for the keywords the grammar leaves
//! out.
//!
//! Measurements only; this module must not print (progress goes to a callback).

use super::key_order::{KeyOrder, in_schema_order, policy_text};
use super::schema_result::{CompileProgress, SchemaResult, unreadable};
use crate::BenchError;
use crate::datasets::maskbench;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;
use toolgram_engine::ByteChecker;
use toolgram_engine::gbnf_check::{self, Job, Verdict};
use toolgram_engine::models;
use toolgram_grammar::gbnf;
use toolgram_grammar::lark::{self, LarkDialect};
use toolgram_grammar::schema::{Note, NoteKind, SchemaError, SchemaOptions, to_grammar};

/// One compiled schema waiting for llama.cpp's verdict.
struct Pending {
    /// Index of the file, so results keep the files' order.
    index: usize,
    result: SchemaResult,
    schema: Value,
    tests: Vec<(Value, bool)>,
    /// Indices into the job's strings of each valid instance's policy rewrites.
    rewrites: Vec<Vec<usize>>,
    deferred: bool,
}

/// Which of our emitters, checked by which engine.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Emitter {
    /// GBNF, run by llama.cpp.
    Gbnf,
    /// OpenAI-dialect Lark, run by llguidance.
    LarkOpenai,
}

/// The peer's GBNF for schema file `name`, or its refusal as a schema error.
fn peer_grammar(dir: &Path, name: &str) -> Result<(String, Vec<Note>), SchemaError> {
    let stem = name.strip_suffix(".json").unwrap_or(name);
    let refused = |message: String| SchemaError {
        tool: None,
        pointer: String::new(),
        keyword: "llama.cpp converter".into(),
        message,
    };
    match std::fs::read_to_string(dir.join(format!("{stem}.gbnf"))) {
        Ok(text) => Ok((text, Vec::new())),
        Err(_) => Err(refused(
            std::fs::read_to_string(dir.join(format!("{stem}.error")))
                .map(|m| m.lines().next().unwrap_or("").chars().take(120).collect())
                .unwrap_or_else(|_| "no grammar written".into()),
        )),
    }
}

/// Every job's verdict from llguidance (which returns errors instead of aborting).
fn llguidance_verdicts(jobs: &[Job]) -> Result<Vec<Verdict>, BenchError> {
    let checker = ByteChecker::new()?;
    Ok(jobs
        .iter()
        .map(|job| match checker.compile(&job.grammar) {
            Ok(compiled) => Verdict {
                parsed: true,
                accepted: job
                    .strings
                    .iter()
                    .map(|s| checker.accepts(&compiled, s))
                    .collect(),
                aborted: false,
            },
            Err(_) => Verdict {
                parsed: false,
                accepted: Vec::new(),
                aborted: false,
            },
        })
        .collect())
}

/// Compile every file with `emitter`, check all grammars and instances in its engine, and
/// score them.
///
/// `peer`: instead of our emitter, the GBNF llama.cpp's own converter wrote for each schema
/// (`DIR/NAME.gbnf`, or `DIR/NAME.error` where it refused; `scripts/llama-cpp-schema-grammars`),
/// judged by the same engine on the same instances, with no post-parse validator (llama.cpp
/// has none) and no compile time (the converter ran inside llama-server).
#[allow(
    clippy::too_many_lines,
    reason = "one verdict pass per schema, its branches the report's columns"
)]
pub(crate) fn results(
    files: &[PathBuf],
    lenient: bool,
    emitter: Emitter,
    peer: Option<&Path>,
    progress: &mut dyn FnMut(CompileProgress),
) -> Result<Vec<SchemaResult>, BenchError> {
    let mut done: Vec<Option<SchemaResult>> = files.iter().map(|_| None).collect();
    let mut pending = Vec::new();
    let mut jobs = Vec::new();
    for (index, f) in files.iter().enumerate() {
        let name = maskbench::file_name(f);
        let Some(case) = maskbench::read(f) else {
            done[index] = Some(unreadable(f));
            continue;
        };
        let mut r = SchemaResult::new(case.subset.clone());
        let opts = SchemaOptions {
            lenient,
            ..SchemaOptions::default()
        };
        let t0 = Instant::now();
        let compiled = match peer {
            Some(dir) => peer_grammar(dir, &name),
            None => to_grammar(&case.schema, &opts).map(|(g, notes)| {
                let text = match emitter {
                    Emitter::Gbnf => gbnf::emit(&g),
                    Emitter::LarkOpenai => lark::emit(&g, LarkDialect::OpenAi),
                };
                (text, notes)
            }),
        };
        r.compile_ms = if peer.is_some() {
            0.0
        } else {
            t0.elapsed().as_secs_f64() * 1e3
        };
        let (text, notes) = match compiled {
            Ok(c) => c,
            Err(e) => {
                r.refused_by = Some(format!("`{}`: {}", e.keyword, e.message));
                done[index] = Some(r);
                continue;
            }
        };
        r.compiled = true;
        r.ignored_keywords = notes
            .iter()
            .filter(|n| matches!(n.kind, NoteKind::Warning(_)))
            .count();
        let tests: Vec<(Value, bool)> = case.tests.into_iter().map(|t| (t.data, t.valid)).collect();
        let mut strings: Vec<String> = tests.iter().map(|(d, _)| d.to_string()).collect();
        let mut rewrites = Vec::new();
        // The peer (llama.cpp's converter) writes required keys first.
        let orders: &[KeyOrder] = match peer {
            Some(_) => &[KeyOrder::Keyword, KeyOrder::RequiredFirst],
            None => &[KeyOrder::Keyword, KeyOrder::OwnFirst],
        };
        for (data, valid) in &tests {
            // The key orders the grammar may write (ours: keyword position, llguidance's,
            // or own properties first; the peer's: required first); compared as text.
            let mut options: Vec<usize> = Vec::new();
            if *valid {
                let original = data.to_string();
                for &order in orders {
                    let text =
                        policy_text(&in_schema_order(data, &case.schema, &case.schema, 0, order));
                    if text != original {
                        options.push(strings.len());
                        strings.push(text);
                    }
                }
            }
            rewrites.push(options);
        }
        jobs.push(Job {
            grammar: text,
            strings,
        });
        pending.push(Pending {
            index,
            result: r,
            schema: case.schema,
            tests,
            rewrites,
            deferred: notes.iter().any(|n| n.kind == NoteKind::Deferred),
        });
    }
    progress(CompileProgress::Compiled {
        compiled: pending.len(),
        total: files.len(),
        checker: match emitter {
            Emitter::Gbnf => "llama.cpp",
            Emitter::LarkOpenai => "llguidance",
        },
    });
    let verdicts = match emitter {
        Emitter::Gbnf => gbnf_check::check_many(&models::find("test")?.fetch()?, &jobs)?,
        Emitter::LarkOpenai => llguidance_verdicts(&jobs)?,
    };
    // To say where a valid instance was stopped (OpenAI Lark only: llguidance tells).
    let locator = match emitter {
        Emitter::LarkOpenai => Some(ByteChecker::new()?),
        Emitter::Gbnf => None,
    };
    for ((p, v), job) in pending.into_iter().zip(verdicts).zip(&jobs) {
        let mut r = p.result;
        if !v.parsed || v.aborted {
            r.compiled = false;
            r.refused_by = Some(match (emitter, v.aborted) {
                (Emitter::Gbnf, true) => "llama.cpp aborted on our GBNF".into(),
                (Emitter::Gbnf, false) => "llama.cpp did not parse our GBNF".into(),
                (Emitter::LarkOpenai, _) => "llguidance did not compile our OpenAI Lark".into(),
            });
            done[p.index] = Some(r);
            continue;
        }
        // Deferred keywords need the validator; a schema it cannot build is refused.
        let validator = match p
            .deferred
            .then(|| toolgram_core::define::arguments::post_parse_validator(&p.schema))
            .transpose()
        {
            Ok(v) => v,
            Err(e) => {
                r.compiled = false;
                r.refused_by = Some(format!("validator: {e}"));
                done[p.index] = Some(r);
                continue;
            }
        };
        for (i, (data, valid)) in p.tests.iter().enumerate() {
            let by_grammar = v.accepted.get(i).copied().unwrap_or(false);
            let by_validator = validator.as_ref().is_none_or(|val| val.is_valid(data));
            if *valid {
                r.valid.1 += 1;
                let rewrite_ok = p.rewrites[i]
                    .iter()
                    .any(|&j| v.accepted.get(j).copied().unwrap_or(false));
                if by_grammar && by_validator {
                    r.valid.0 += 1;
                } else if !by_validator {
                    r.validator_rejected += 1;
                } else if rewrite_ok {
                    r.out_of_order_valid_rejected += 1;
                } else if r.valid_rejected_at.is_none()
                    && let Some(c) = &locator
                    && let Ok(g) = c.compile(&job.grammar)
                {
                    r.valid_rejected_at = Some(c.accepted_len(&g, &data.to_string()));
                }
            } else {
                r.invalid.1 += 1;
                r.invalid.0 += usize::from(!(by_grammar && by_validator));
            }
        }
        done[p.index] = Some(r);
    }
    Ok(done.into_iter().flatten().collect())
}
