//! BFCL (Berkeley Function Calling Leaderboard) read as BFCL itself reads it: category `C` from
//! `BFCL_v<N>_C.json` beside `possible_answer/BFCL_v<N>_C.json`, its functions turned into
//! OpenAI tools the way BFCL prepares them for function-calling models, and scored by a port of
//! BFCL's AST checker. The one BFCL reader of the project.
//!
//! Contents: [`read_category`] and [`Item`] here; [`convert`] (BFCL's type dialect → JSON
//! Schema); [`checker`] (the AST checker); [`fc`] (BFCL's function-calling protocol: its
//! request, decode and verdict); [`java`] and [`js`] (BFCL's converters of Java and
//! JavaScript argument strings); [`pyvalue`] (Python's types and equality on JSON values);
//! [`summary`] (BFCL's own summary of a run's rows: its non-live overall).
//!
//! This module must not run a model: it reads and scores.

pub mod checker;
pub mod convert;
pub mod fc;
pub mod java;
pub mod js;
pub mod pyvalue;
pub mod summary;
#[cfg(test)]
mod tests;

use crate::EvalError;
use crate::record::ItemRecord;
use checker::Call;
use serde_json::json;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use toolgram_core::ChatMessage;

/// The categories `toolgram eval bfcl` runs when none are named.
pub const DEFAULT_CATEGORIES: [&str; 7] = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
];

/// The language a category's functions are written in (BFCL: `java` / `javascript` in the
/// category's name; Python otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Python 3 (and every category not named after another language).
    Python,
    /// Java 8: every argument is a Java expression in a string.
    Java,
    /// JavaScript: every argument is a JavaScript expression in a string.
    JavaScript,
}

impl Language {
    /// The language of a category, from its name as BFCL decides it.
    pub fn of(category: &str) -> Self {
        if category.contains("javascript") {
            Self::JavaScript
        } else if category.contains("java") {
            Self::Java
        } else {
            Self::Python
        }
    }
}

/// How a category is scored, from its name as BFCL decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scoring {
    /// One call, checked against the one expected call.
    Simple,
    /// Exactly one call among several offered functions.
    Multiple,
    /// Several calls in any order, each matched to one expected call.
    Parallel,
    /// No call may be made.
    NoCall,
    /// At least one call must be made (BFCL's `live_relevance`).
    AnyCall,
}

impl Scoring {
    /// The scoring of a category; `has_answers` says whether a possible-answer file exists
    /// (a category without one is scored as irrelevance: no call).
    pub fn of(category: &str, has_answers: bool) -> Self {
        if category.contains("irrelevance") {
            Self::NoCall
        } else if category.contains("relevance") {
            Self::AnyCall
        } else if !has_answers {
            Self::NoCall
        } else if category.contains("parallel") {
            Self::Parallel
        } else if category.contains("multiple") {
            Self::Multiple
        } else {
            Self::Simple
        }
    }

    /// Whether a call is due (convergence and first-tool match are counted on these).
    pub fn call_due(self) -> bool {
        !matches!(self, Self::NoCall)
    }
}

/// One BFCL test item.
#[derive(Debug, Clone)]
pub struct Item {
    /// `simple_python_0`, …
    pub id: String,
    /// The category it was read from.
    pub category: String,
    /// Its functions' language.
    pub language: Language,
    /// How it is scored.
    pub scoring: Scoring,
    /// The conversation (the item's one turn: system and user messages).
    pub messages: Vec<Value>,
    /// The functions as BFCL wrote them (BFCL names and types): what the checker reads.
    pub functions: Vec<Value>,
    /// The functions as OpenAI tools (names with `.` → `_`, types mapped).
    pub tools: Vec<Value>,
    /// The tools exactly as BFCL's handler sends them (`format: float` and `optional` kept):
    /// what BFCL's protocol sends.
    pub tools_as_bfcl_sends: Vec<Value>,
    /// Expected calls, one `{function: {parameter: [accepted values]}}` per call.
    pub answers: Vec<Map<String, Value>>,
}

impl Item {
    /// The conversation as chat messages.
    pub fn chat_messages(&self) -> Vec<ChatMessage> {
        self.messages
            .iter()
            .map(|m| {
                ChatMessage::text(
                    m["role"].as_str().unwrap_or("user"),
                    m["content"].as_str().unwrap_or_default(),
                )
            })
            .collect()
    }

    /// The tool names of the calls the answers expect.
    pub fn expected_tools(&self) -> Vec<String> {
        self.answers
            .iter()
            .flat_map(|a| a.keys().map(|k| convert::tool_name(k)))
            .collect()
    }
}

/// The question file of category `category` in `dir` (`BFCL_v<N>_<category>.json`, the
/// highest `N` when several exist).
pub fn category_file(dir: &Path, category: &str) -> Option<PathBuf> {
    versioned(dir, category)
}

fn versioned(dir: &Path, category: &str) -> Option<PathBuf> {
    let suffix = format!("_{category}.json");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("BFCL_v")?.strip_suffix(&suffix)?;
            let n = version.parse::<u32>().ok()?;
            Some((n, e.path()))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

fn read_lines(path: &Path) -> Result<Vec<Value>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::io(path, e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| EvalError::Data {
                file: path.to_path_buf(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// Read category `category` from `dir`, with its answers when `possible_answer/` has them.
pub fn read_category(dir: &Path, category: &str) -> Result<Vec<Item>, EvalError> {
    let file = category_file(dir, category).ok_or_else(|| EvalError::NoCategory {
        dir: dir.to_path_buf(),
        category: category.to_owned(),
    })?;
    if category.starts_with("multi_turn") {
        return Err(EvalError::Unsupported(format!(
            "{category}: multi-turn categories are scored by execution, not by the AST checker"
        )));
    }
    let answer_file = versioned(&dir.join("possible_answer"), category);
    let mut answers: HashMap<String, Vec<Map<String, Value>>> = HashMap::new();
    if let Some(f) = &answer_file {
        for (i, v) in read_lines(f)?.into_iter().enumerate() {
            let bad = |message: &str| EvalError::Data {
                file: f.clone(),
                line: i + 1,
                message: message.to_owned(),
            };
            let id = v["id"].as_str().ok_or_else(|| bad("no `id`"))?.to_owned();
            let truth = v["ground_truth"]
                .as_array()
                .ok_or_else(|| bad("no `ground_truth` list"))?
                .iter()
                .map(|g| {
                    g.as_object()
                        .cloned()
                        .ok_or_else(|| bad("an answer is not an object"))
                })
                .collect::<Result<_, _>>()?;
            answers.insert(id, truth);
        }
    }
    let language = Language::of(category);
    let scoring = Scoring::of(category, answer_file.is_some());
    read_lines(&file)?
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let bad = |message: String| EvalError::Data {
                file: file.clone(),
                line: i + 1,
                message,
            };
            let id = v["id"]
                .as_str()
                .ok_or_else(|| bad("no `id`".into()))?
                .to_owned();
            let turns = v["question"]
                .as_array()
                .ok_or_else(|| bad("no `question`".into()))?;
            if turns.len() != 1 {
                return Err(bad(format!(
                    "{id}: {} turns; one was expected",
                    turns.len()
                )));
            }
            let messages = turns[0]
                .as_array()
                .ok_or_else(|| bad("a turn is not a list".into()))?
                .clone();
            let functions = v["function"]
                .as_array()
                .ok_or_else(|| bad("no `function` list".into()))?
                .clone();
            let tools = functions
                .iter()
                .map(|f| convert::openai_tool(f, language))
                .collect::<Result<_, _>>()
                .map_err(|e| bad(format!("{id}: {e}")))?;
            let tools_as_bfcl_sends = functions
                .iter()
                .map(|f| convert::openai_tool_as_bfcl_sends(f, language))
                .collect::<Result<_, _>>()
                .map_err(|e| bad(format!("{id}: {e}")))?;
            let expected = answers.remove(&id).unwrap_or_default();
            if matches!(
                scoring,
                Scoring::Simple | Scoring::Multiple | Scoring::Parallel
            ) && expected.is_empty()
            {
                return Err(bad(format!("{id}: no possible answer")));
            }
            Ok(Item {
                id,
                category: category.to_owned(),
                language,
                scoring,
                messages,
                functions,
                tools,
                tools_as_bfcl_sends,
                answers: expected,
            })
        })
        .collect()
}

/// The items of `categories` in `dir`, at most `limit` per category spread evenly over its
/// file (the same items on every run with the same limit).
pub fn read_items(
    dir: &Path,
    categories: &[String],
    limit: Option<usize>,
) -> Result<Vec<Item>, EvalError> {
    let mut items = Vec::new();
    for c in categories {
        let all = read_category(dir, c)?;
        match limit {
            Some(n) if n < all.len() => {
                let step = all.len() as f64 / n.max(1) as f64;
                items.extend((0..n).filter_map(|k| all.get((k as f64 * step) as usize).cloned()));
            }
            _ => items.extend(all),
        }
    }
    Ok(items)
}

/// Every record in the records file `path` whose item is among `items` scored again
/// ([`rescored`]), the others kept as they are; the file is replaced through a temporary
/// beside it, so a failure loses nothing. Returns how many records there are and how many
/// verdicts changed.
pub fn rescore_file(path: &Path, items: &[Item]) -> Result<(usize, usize), EvalError> {
    let by_id: HashMap<&str, &Item> = items.iter().map(|i| (i.id.as_str(), i)).collect();
    let records = crate::record::read_records(path)?;
    let tmp = path.with_extension("jsonl.rescoring");
    let mut writer = crate::record::RecordWriter::open(&tmp, true)?;
    let mut changed = 0;
    for r in &records {
        let again = by_id
            .get(r.id.as_str())
            .map_or_else(|| r.clone(), |i| rescored(i, r));
        changed += usize::from(again.correct != r.correct);
        writer.write(&again)?;
    }
    drop(writer);
    std::fs::rename(&tmp, path).map_err(|e| EvalError::io(path, e))?;
    Ok((records.len(), changed))
}

/// `record` scored again from its stored calls by this version's checker (a record an older
/// toolgram made): BFCL's verdict on the calls. A reason that says why no call was decoded (a
/// run's error) stays, so the strict column still counts it; a peer's transport error stays a
/// miss.
pub fn rescored(item: &Item, record: &ItemRecord) -> ItemRecord {
    if record
        .reason
        .as_deref()
        .is_some_and(|r| r.starts_with("peer error:") || r.starts_with("tools refused:"))
    {
        return record.clone();
    }
    let calls: Vec<Call> = record
        .calls
        .iter()
        .filter_map(|c| {
            Some(Call {
                name: c["name"].as_str()?.to_owned(),
                arguments: c["arguments"].as_object()?.clone(),
            })
        })
        .collect();
    let verdict = checker::check(item, &calls);
    let reason = match verdict {
        _ if calls.is_empty() && record.reason.is_some() => record.reason.clone(),
        Ok(()) => None,
        Err(ref m) => Some(format!("{}: {}", m.kind, m.message)),
    };
    ItemRecord {
        correct: verdict.is_ok(),
        reason,
        ..record.clone()
    }
}

/// Score `calls` for `item` and fill the fields every mode shares.
pub(crate) fn scored(item: &Item, mode: &str, calls: &[Call]) -> ItemRecord {
    let verdict = checker::check(item, calls);
    let expected = item.expected_tools();
    let first_tool_match = calls.first().is_some_and(|c| {
        expected.contains(&c.name) || (item.scoring == Scoring::AnyCall && expected.is_empty())
    });
    ItemRecord {
        correct: verdict.is_ok(),
        reason: verdict.err().map(|m| format!("{}: {}", m.kind, m.message)),
        parsed: true,
        valid: true,
        called: !calls.is_empty(),
        first_tool_match,
        calls: calls
            .iter()
            .map(|c| json!({"name": c.name, "arguments": c.arguments}))
            .collect(),
        attempts: 1,
        ..ItemRecord::new(&item.id, &item.category, mode, item.scoring.call_due())
    }
}
