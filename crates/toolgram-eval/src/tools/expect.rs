//! The outcome a task must produce, compared with what the tool returned: a number (to a
//! relative 1e-6), rows (as a set unless order matters), the whole file tree after a patch,
//! lines the command's output must (and must not) have, the matches a search must find, what
//! a regex must do on given strings. Every field given must hold.
//!
//! This module must not run tools.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// What running the task's call must give.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `math_eval`: the value.
    #[serde(default)]
    pub number: Option<f64>,
    /// `sql_query`: the rows.
    #[serde(default)]
    pub rows: Option<Vec<Vec<Value>>>,
    /// The rows must come in this order (otherwise any order).
    #[serde(default)]
    pub ordered: bool,
    /// `apply_patch`: every file of the workspace afterwards (path → content).
    #[serde(default)]
    pub files: Option<BTreeMap<String, String>>,
    /// `shell_constrained`: regexes (multi-line) the output must match.
    #[serde(default)]
    pub stdout: Vec<String>,
    /// Regexes the output must not match.
    #[serde(default)]
    pub stdout_not: Vec<String>,
    /// `code_search`: `[path, line]` pairs that must be among the matches.
    #[serde(default)]
    pub matches: Option<Vec<(String, usize)>>,
    /// Most matches allowed (default: exactly the expected ones' count).
    #[serde(default)]
    pub max_matches: Option<usize>,
    /// `regex_tester`: what the regex must do on these strings.
    #[serde(default)]
    pub cases: Option<Vec<Case>>,
}

/// A string a regex must be tried on, and what it must do there.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The string (the model must test it).
    pub string: String,
    /// Whether the regex must match it.
    pub is_match: bool,
    /// The first match's text, when given.
    #[serde(default)]
    pub text: Option<String>,
    /// The first match's capture groups, when given.
    #[serde(default)]
    pub groups: Option<Vec<Option<String>>>,
}

impl Expect {
    /// Nothing is expected (a malformed task).
    pub fn is_empty(&self) -> bool {
        self.number.is_none()
            && self.rows.is_none()
            && self.files.is_none()
            && self.stdout.is_empty()
            && self.stdout_not.is_empty()
            && self.matches.is_none()
            && self.cases.is_none()
    }

    /// Compare the tool's `result` (and the workspace it ran in) with the expectation; `Err`
    /// says the first difference.
    pub fn check(&self, result: &Value, workspace: &Path) -> Result<(), String> {
        if let Some(want) = self.number {
            number(result, want)?;
        }
        if let Some(want) = &self.rows {
            rows(result, want, self.ordered)?;
        }
        if let Some(want) = &self.files {
            files(workspace, want)?;
        }
        if !self.stdout.is_empty() || !self.stdout_not.is_empty() {
            stdout(result, &self.stdout, &self.stdout_not)?;
        }
        if let Some(want) = &self.matches {
            matches(result, want, self.max_matches.unwrap_or(want.len()))?;
        }
        if let Some(want) = &self.cases {
            cases(result, want)?;
        }
        Ok(())
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

fn number(result: &Value, want: f64) -> Result<(), String> {
    let got = result
        .get("decimal")
        .and_then(Value::as_str)
        .and_then(|d| d.parse::<f64>().ok())
        .ok_or_else(|| format!("no number in {result}"))?;
    if close(got, want) {
        Ok(())
    } else {
        Err(format!("expected {want}, got {got}"))
    }
}

/// A cell as comparable text: numbers to 6 decimals (an integer and the same real agree).
fn cell(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map_or(n.to_string(), |f| format!("{f:.6}")),
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn rows(result: &Value, want: &[Vec<Value>], ordered: bool) -> Result<(), String> {
    let got = result
        .get("rows")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no rows in {result}"))?;
    let text = |r: &[Value]| r.iter().map(cell).collect::<Vec<_>>().join(", ");
    let mut got: Vec<String> = got
        .iter()
        .map(|r| r.as_array().map_or(String::new(), |r| text(r)))
        .collect();
    let mut want: Vec<String> = want.iter().map(|r| text(r)).collect();
    if !ordered {
        got.sort();
        want.sort();
    }
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "expected rows [{}], got [{}]",
            want.join("; "),
            got.join("; ")
        ))
    }
}

fn tree(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            tree(root, &path, out)?;
        } else {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.insert(name, text);
        }
    }
    Ok(())
}

fn files(workspace: &Path, want: &BTreeMap<String, String>) -> Result<(), String> {
    let mut got = BTreeMap::new();
    tree(workspace, workspace, &mut got)?;
    for (path, text) in want {
        match got.get(path) {
            None => return Err(format!("{path} is missing")),
            Some(t) if t != text => {
                return Err(format!("{path} is {t:?}, expected {text:?}"));
            }
            Some(_) => {}
        }
    }
    match got.keys().find(|p| !want.contains_key(*p)) {
        Some(extra) => Err(format!("{extra} should not exist")),
        None => Ok(()),
    }
}

fn multiline(re: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(&format!("(?m){re}")).map_err(|e| format!("task regex {re:?}: {e}"))
}

fn stdout(result: &Value, must: &[String], must_not: &[String]) -> Result<(), String> {
    let out = result
        .get("stdout")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no output in {result}"))?;
    for re in must {
        if !multiline(re)?.is_match(out) {
            return Err(format!("output lacks /{re}/: {out:?}"));
        }
    }
    for re in must_not {
        if multiline(re)?.is_match(out) {
            return Err(format!("output has /{re}/: {out:?}"));
        }
    }
    Ok(())
}

fn matches(result: &Value, want: &[(String, usize)], max: usize) -> Result<(), String> {
    let got: Vec<(String, usize)> = result
        .get("matches")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no matches in {result}"))?
        .iter()
        .filter_map(|m| {
            let path = m.get("path")?.as_str()?.replace('\\', "/");
            let line = usize::try_from(m.get("line")?.as_u64()?).ok()?;
            Some((path, line))
        })
        .collect();
    if let Some((p, l)) = want.iter().find(|w| !got.contains(w)) {
        return Err(format!("{p}:{l} not found (found {got:?})"));
    }
    if got.len() > max {
        return Err(format!(
            "{} matches, at most {max} wanted: {got:?}",
            got.len()
        ));
    }
    Ok(())
}

fn cases(result: &Value, want: &[Case]) -> Result<(), String> {
    let results = result
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no results in {result}"))?;
    for case in want {
        let r = results
            .iter()
            .find(|r| r.get("string").and_then(Value::as_str) == Some(case.string.as_str()))
            .ok_or_else(|| format!("{:?} was not tested", case.string))?;
        let is_match = r.get("is_match").and_then(Value::as_bool).unwrap_or(false);
        if is_match != case.is_match {
            return Err(format!(
                "{:?}: matched {is_match}, expected {}",
                case.string, case.is_match
            ));
        }
        let first = r.pointer("/matches/0");
        if let Some(text) = &case.text {
            let got = first.and_then(|m| m.get("text")).and_then(Value::as_str);
            if got != Some(text.as_str()) {
                return Err(format!(
                    "{:?}: matched {got:?}, expected {text:?}",
                    case.string
                ));
            }
        }
        if let Some(groups) = &case.groups {
            let got: Vec<Option<String>> = first
                .and_then(|m| m.get("groups"))
                .and_then(Value::as_array)
                .map(|gs| {
                    gs.iter()
                        .map(|g| g.get("text").and_then(Value::as_str).map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            if &got != groups {
                return Err(format!(
                    "{:?}: groups {got:?}, expected {groups:?}",
                    case.string
                ));
            }
        }
    }
    Ok(())
}
