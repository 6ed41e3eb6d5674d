//! MaskBench through our own GBNF path: each schema → `schema::to_grammar` → GBNF →
//! llama.cpp's grammar engine (child process), valid instances must be accepted, invalid
//! ones rejected (by the grammar, or after parse by `jsonschema` for deferred keywords).
//!
//! `cargo run --release -p toolgram-engine --example maskbench_gbnf -- DATA_DIR [N] [SEED]`
//! (DATA_DIR = `maskbench/data` of the unpacked jsonschemabench; N = sample size, default all).

use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Instant;
use toolgram_core::grammar::gbnf;
use toolgram_core::schema::{self, NoteKind, SchemaOptions};
use toolgram_engine::gbnf_check::{self, Job};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .map(String::as_str)
        .unwrap_or("/work/data/jsonschemabench/maskbench/data");
    let n: usize = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(usize::MAX);
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    if n < files.len() {
        // Fixed seeded sample (xorshift Fisher–Yates).
        let mut s = seed.max(1);
        for i in (1..files.len()).rev() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            files.swap(i, (s % (i as u64 + 1)) as usize);
        }
        files.truncate(n);
        files.sort();
    }
    let model = toolgram_engine::models::find("test")?.fetch()?;
    let (mut compiled, mut refused, mut strict_refused) = (0usize, 0usize, 0usize);
    let mut refused_by: BTreeMap<String, usize> = BTreeMap::new();
    let mut times = Vec::new();
    let mut pending: Vec<(Job, usize, Value)> = Vec::new();
    let total = files.len();
    for f in &files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(f)?)?;
        let schema = &doc["schema"];
        let t = Instant::now();
        let strict = schema::to_grammar(schema, &SchemaOptions::default());
        if let Err(e) = &strict {
            strict_refused += 1;
            let _ = e;
        }
        let lenient = SchemaOptions {
            lenient: true,
            ..SchemaOptions::default()
        };
        match schema::to_grammar(schema, &lenient) {
            Ok((g, notes)) => {
                let text = gbnf::emit(&g);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                compiled += 1;
                let deferred = notes.iter().any(|n| n.kind == NoteKind::Deferred);
                let tests = doc["tests"].as_array().cloned().unwrap_or_default();
                let strings = tests.iter().map(|t| t["data"].to_string()).collect();
                pending.push((
                    Job {
                        grammar: text,
                        strings,
                    },
                    usize::from(deferred),
                    doc,
                ));
            }
            Err(e) => {
                eprintln!("REFUSED {}: {e}", doc["description"]);
                refused += 1;
                *refused_by.entry(e.keyword.clone()).or_default() += 1;
            }
        }
    }
    eprintln!("compiled {compiled}/{total}; checking in llama.cpp…");
    let jobs: Vec<Job> = pending.iter().map(|p| p.0.clone()).collect();
    let verdicts = gbnf_check::check_many(&model, &jobs)?;
    let (mut passed, mut passed_grammar_only, mut not_parsed, mut aborted) = (0, 0, 0, 0);
    let (mut valid, mut valid_ok, mut invalid, mut invalid_grammar, mut invalid_after) =
        (0, 0, 0, 0, 0);
    let mut with_deferred = 0;
    for ((_, deferred, doc), v) in pending.iter().zip(&verdicts) {
        with_deferred += deferred;
        if v.aborted {
            aborted += 1;
        }
        if !v.parsed {
            not_parsed += 1;
        }
        let validator = jsonschema::validator_for(&doc["schema"]).ok();
        let tests = doc["tests"].as_array().cloned().unwrap_or_default();
        let (mut ok, mut ok_grammar) = (v.parsed, v.parsed);
        for (i, t) in tests.iter().enumerate() {
            let acc = v.accepted.get(i).copied().unwrap_or(false);
            if t["valid"] == true {
                valid += 1;
                valid_ok += usize::from(acc);
                if !acc && v.parsed {
                    eprintln!("VALID REJECTED {}: {}", doc["description"], t["data"]);
                }
                ok &= acc;
                ok_grammar &= acc;
            } else {
                invalid += 1;
                let after = acc
                    && validator
                        .as_ref()
                        .is_some_and(|val| !val.is_valid(&t["data"]));
                invalid_grammar += usize::from(!acc);
                invalid_after += usize::from(after);
                ok &= !acc || after;
                if acc && !after {
                    eprintln!("INVALID ACCEPTED {}: {}", doc["description"], t["data"]);
                }
                ok_grammar &= !acc;
            }
        }
        passed += usize::from(ok);
        passed_grammar_only += usize::from(ok_grammar);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!("schemas: {total} (strict mode refuses {strict_refused})");
    println!(
        "compiled (lenient: unknown keywords as warnings): {compiled}; refused {refused}: {refused_by:?}"
    );
    println!("compiled with deferred keywords: {with_deferred}");
    println!("GBNF not parsed by llama.cpp: {not_parsed} (child aborted/hung: {aborted})");
    println!("valid accepted: {valid_ok}/{valid}");
    println!(
        "invalid rejected by grammar: {invalid_grammar}/{invalid}; + after parse: {invalid_after}"
    );
    println!(
        "schemas passing (all valid accepted, all invalid rejected incl. after-parse): {passed}/{total}"
    );
    println!("schemas passing on the grammar alone: {passed_grammar_only}/{total}");
    println!("compile+emit ms p50 {:.2} p99 {:.2}", pct(0.5), pct(0.99));
    Ok(())
}
