//! Checks GBNF against the real llama.cpp grammar engine: does it parse, and which strings
//! does it accept (fed token by token through llama.cpp's grammar sampler with a real
//! vocabulary, then end-of-sequence)?
//!
//! llama.cpp's grammar code aborts the process on some inputs, so the work runs in a child
//! process (`toolgram-gbnf-check`, JSON lines on stdin/stdout); a child that dies counts as
//! a failed check for the job it was on and the rest are retried in a fresh child. This
//! module must not run grammars in the calling process except through [`run_jobs`], which
//! only the child calls.

use crate::error::EngineError;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Longest wait for one job's verdict before the child is ended and the job counted as
/// failed (llama.cpp's grammar stacks can grow without bound on ambiguous grammars).
pub const JOB_TIMEOUT: Duration = Duration::from_secs(20);

/// One grammar and the strings to try on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    /// GBNF text (start rule `root`).
    pub grammar: String,
    /// Strings to check.
    pub strings: Vec<String>,
}

/// llama.cpp's verdict on one job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// llama.cpp parsed the grammar (false also when the child aborted on it).
    pub parsed: bool,
    /// Per string: accepted in full, with end-of-sequence allowed after it.
    pub accepted: Vec<bool>,
    /// The child process died (or hung past [`JOB_TIMEOUT`]) on this job.
    #[serde(default)]
    pub aborted: bool,
}

/// Check one grammar on `strings` with the model at `model` (its vocabulary tokenizes).
pub fn check(model: &Path, grammar: &str, strings: &[String]) -> Result<Verdict, EngineError> {
    let job = Job {
        grammar: grammar.to_owned(),
        strings: strings.to_vec(),
    };
    let mut v = check_many(model, &[job])?;
    v.pop()
        .ok_or_else(|| EngineError::Grammar("gbnf check returned nothing".into()))
}

/// Check many jobs in as few child processes as aborts allow.
pub fn check_many(model: &Path, jobs: &[Job]) -> Result<Vec<Verdict>, EngineError> {
    let exe = checker_exe()?;
    let mut out: Vec<Verdict> = Vec::with_capacity(jobs.len());
    while out.len() < jobs.len() {
        let rest = &jobs[out.len()..];
        let got = run_child(&exe, model, rest)?;
        let n = got.len();
        out.extend(got);
        if n < rest.len() {
            out.push(Verdict {
                parsed: false,
                accepted: vec![false; rest[n].strings.len()],
                aborted: true,
            });
        }
    }
    Ok(out)
}

fn spawn_err(e: impl std::fmt::Display) -> EngineError {
    EngineError::Grammar(format!("gbnf check child: {e}"))
}

fn run_child(exe: &Path, model: &Path, jobs: &[Job]) -> Result<Vec<Verdict>, EngineError> {
    let mut child = Command::new(exe)
        .arg(model)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(spawn_err)?;
    let mut input = String::new();
    for j in jobs {
        input.push_str(&serde_json::to_string(j).map_err(spawn_err)?);
        input.push('\n');
    }
    let mut stdin = child.stdin.take().ok_or_else(|| spawn_err("no stdin"))?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().ok_or_else(|| spawn_err("no stdout"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut verdicts = Vec::new();
    while verdicts.len() < jobs.len() {
        match rx.recv_timeout(JOB_TIMEOUT) {
            Ok(line) => match serde_json::from_str::<Verdict>(&line) {
                Ok(v) => verdicts.push(v),
                Err(_) => break,
            },
            Err(_) => {
                // Dead (channel closed) or stuck on one grammar: end this child.
                let _ = child.kill();
                break;
            }
        }
    }
    let _ = child.wait();
    let _ = writer.join();
    let _ = reader.join();
    Ok(verdicts)
}

/// The child binary: `TOOLGRAM_GBNF_CHECK`, else next to (or one above) the running
/// executable.
fn checker_exe() -> Result<PathBuf, EngineError> {
    if let Ok(p) = std::env::var("TOOLGRAM_GBNF_CHECK") {
        return Ok(PathBuf::from(p));
    }
    let me = std::env::current_exe().map_err(spawn_err)?;
    let name = format!("toolgram-gbnf-check{}", std::env::consts::EXE_SUFFIX);
    me.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join(&name))
        .find(|p| p.is_file())
        .ok_or_else(|| spawn_err(format!("{name} not found next to {}", me.display())))
}

/// The child's work: read jobs as JSON lines from `input`, write one verdict line each.
/// Runs llama.cpp in this process; only `toolgram-gbnf-check` calls it.
pub fn run_jobs(
    model: &Path,
    input: impl BufRead,
    mut output: impl Write,
) -> Result<(), EngineError> {
    let backend = crate::backend::backend()?;
    let model = LlamaModel::load_from_file(backend.llama(), model, &LlamaModelParams::default())
        .map_err(|e| EngineError::ModelLoad {
            path: model.display().to_string(),
            reason: e.to_string(),
        })?;
    for line in input.lines() {
        let line = line.map_err(spawn_err)?;
        if line.trim().is_empty() {
            continue;
        }
        let job: Job = serde_json::from_str(&line).map_err(spawn_err)?;
        let verdict = judge(&model, &job);
        let text = serde_json::to_string(&verdict).map_err(spawn_err)?;
        writeln!(output, "{text}").map_err(spawn_err)?;
        output.flush().map_err(spawn_err)?;
    }
    Ok(())
}

fn judge(model: &LlamaModel, job: &Job) -> Verdict {
    if LlamaSampler::grammar(model, &job.grammar, "root").is_err() {
        return Verdict {
            parsed: false,
            accepted: vec![false; job.strings.len()],
            aborted: false,
        };
    }
    let vocab = model.vocab();
    let eos = vocab.eos();
    let accepted = job
        .strings
        .iter()
        .map(|s| {
            let Ok(mut sampler) = LlamaSampler::grammar(model, &job.grammar, "root") else {
                return false;
            };
            let allowed = |sampler: &mut LlamaSampler, t| {
                let mut arr =
                    LlamaTokenDataArray::new(vec![LlamaTokenData::new(t, 0.0, 0.0)], false);
                sampler.apply(&mut arr);
                arr.data.first().is_some_and(|d| d.logit().is_finite())
            };
            for t in vocab.tokenize(s.as_bytes(), false, false) {
                if !allowed(&mut sampler, t) {
                    return false;
                }
                sampler.accept(t);
            }
            allowed(&mut sampler, eos)
        })
        .collect();
    Verdict {
        parsed: true,
        accepted,
        aborted: false,
    }
}
