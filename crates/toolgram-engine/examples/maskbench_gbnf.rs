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
    let mut strict_by: BTreeMap<String, usize> = BTreeMap::new();
    let mut times = Vec::new();
    let mut pending: Vec<(Job, usize, Value)> = Vec::new();
    let total = files.len();
    for f in &files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(f)?)?;
        let schema = &doc["schema"];
        if std::env::var_os("MASKBENCH_TRACE").is_some() {
            eprintln!("COMPILING {}", f.display());
        }
        let t = Instant::now();
        let strict = schema::to_grammar(schema, &SchemaOptions::default());
        if let Err(e) = &strict {
            strict_refused += 1;
            *strict_by.entry(e.keyword.clone()).or_default() += 1;
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
    drop(jobs);
    if let Ok(path) = std::env::var("MASKBENCH_VERDICTS") {
        std::fs::write(path, serde_json::to_string(&verdicts)?)?;
    }
    let (mut passed, mut passed_grammar_only, mut not_parsed, mut aborted) = (0, 0, 0, 0);
    let (mut valid, mut valid_ok, mut invalid, mut invalid_grammar, mut invalid_after) =
        (0, 0, 0, 0, 0);
    let mut with_deferred = 0;
    let mut order_jobs: Vec<(usize, String)> = Vec::new();
    let mut order_jobs_owner: Vec<usize> = Vec::new();
    let mut failed_only_valid: Vec<bool> = vec![false; pending.len()];
    for (idx, ((_, deferred, doc), v)) in pending.iter().zip(&verdicts).enumerate() {
        with_deferred += deferred;
        if v.aborted {
            aborted += 1;
        }
        if !v.parsed {
            not_parsed += 1;
            eprintln!("NOT PARSED {} (aborted: {})", doc["description"], v.aborted);
        }
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&doc["schema"])
            .ok();
        let tests = doc["tests"].as_array().cloned().unwrap_or_default();
        let (mut ok, mut ok_grammar) = (v.parsed, v.parsed);
        for (i, t) in tests.iter().enumerate() {
            let acc = v.accepted.get(i).copied().unwrap_or(false);
            if t["valid"] == true {
                valid += 1;
                valid_ok += usize::from(acc);
                if !acc && v.parsed {
                    let reordered = reorder(&t["data"], &doc["schema"], &doc["schema"], 0);
                    let original = t["data"].to_string();
                    if reordered != original {
                        order_jobs.push((order_jobs_owner.len(), reordered));
                    } else {
                        eprintln!("VALID REJECTED {}: {}", doc["description"], t["data"]);
                    }
                    order_jobs_owner.push(idx);
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
        let invalid_ok = tests.iter().enumerate().all(|(i, t)| {
            let acc = v.accepted.get(i).copied().unwrap_or(false);
            t["valid"] == true
                || !acc
                || validator
                    .as_ref()
                    .is_some_and(|val| !val.is_valid(&t["data"]))
        });
        failed_only_valid[idx] = !ok && invalid_ok && v.parsed;
        passed_grammar_only += usize::from(ok_grammar);
    }
    // Valid instances rejected only because their keys are out of schema order.
    let order_check: Vec<Job> = order_jobs
        .iter()
        .map(|(i, text)| Job {
            grammar: pending[order_jobs_owner[*i]].0.grammar.clone(),
            strings: vec![text.clone()],
        })
        .collect();
    let order_verdicts = gbnf_check::check_many(&model, &order_check)?;
    let mut order_only = 0;
    let mut fixed_by_order: BTreeMap<usize, bool> = BTreeMap::new();
    for (i, &owner) in order_jobs_owner.iter().enumerate() {
        let ok = order_jobs
            .iter()
            .position(|(k, _)| *k == i)
            .and_then(|p| order_verdicts.get(p))
            .is_some_and(|v| v.accepted.first() == Some(&true));
        order_only += usize::from(ok);
        let e = fixed_by_order.entry(owner).or_insert(true);
        *e &= ok;
    }
    let passing_under_order_policy = passed
        + fixed_by_order
            .iter()
            .filter(|(o, ok)| **ok && failed_only_valid[**o])
            .count();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let mut top: Vec<(&String, &usize)> = strict_by.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1));
    top.truncate(12);
    println!("schemas: {total} (strict mode refuses {strict_refused}; top keywords {top:?})");
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
    println!(
        "valid rejected: {}, of which only for key order: {order_only}",
        valid - valid_ok
    );
    println!(
        "schemas passing under the order policy (out-of-order valid instances reordered): {passing_under_order_policy}/{total}"
    );
    println!("compile+emit ms p50 {:.2} p99 {:.2}", pct(0.5), pct(0.99));
    Ok(())
}

/// `v` with object keys in the order the schema declares them (serialized).
fn reorder(v: &Value, schema: &Value, root: &Value, depth: usize) -> String {
    fn resolve<'a>(s: &'a Value, root: &'a Value) -> &'a Value {
        match s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            Some(p) => root.pointer(p).unwrap_or(s),
            None => s,
        }
    }
    fn props<'a>(
        s: &'a Value,
        root: &'a Value,
        out: &mut Vec<(&'a str, &'a Value)>,
        seen: &mut Vec<*const Value>,
        depth: usize,
    ) {
        let s = resolve(s, root);
        if depth > 8 || seen.contains(&(s as *const Value)) || seen.len() > 2000 {
            return;
        }
        seen.push(s as *const Value);
        if let Some(p) = s.get("properties").and_then(Value::as_object) {
            for (k, sub) in p {
                if !out.iter().any(|(n, _)| *n == k.as_str()) {
                    out.push((k, sub));
                }
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(a) = s.get(key).and_then(Value::as_array) {
                for m in a {
                    props(m, root, out, seen, depth + 1);
                }
            }
        }
    }
    let schema = resolve(schema, root);
    match v {
        Value::Object(m) if depth < 64 => {
            let mut order = Vec::new();
            props(schema, root, &mut order, &mut Vec::new(), 0);
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by_key(|k| order.iter().position(|(n, _)| n == k).unwrap_or(usize::MAX));
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    let sub = order
                        .iter()
                        .find(|(n, _)| n == k)
                        .map(|(_, s)| *s)
                        .or_else(|| schema.get("additionalProperties"))
                        .unwrap_or(&Value::Bool(true));
                    format!(
                        "{}:{}",
                        Value::String((*k).clone()),
                        reorder(&m[*k], sub, root, depth + 1)
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) if depth < 64 => {
            let items = schema.get("items").unwrap_or(&Value::Bool(true));
            let parts: Vec<String> = a
                .iter()
                .map(|x| reorder(x, items, root, depth + 1))
                .collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}
