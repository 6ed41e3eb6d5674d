//! Running a regex test: compile with the `regex` crate (size-limited; its own errors are
//! typed input errors), then report matches, spans and groups per string.

use super::Test;
use crate::definition::ToolError;
use regex::RegexBuilder;
use serde_json::{Value, json};

/// Most matches reported per string.
const MAX_MATCHES: usize = 100;

/// Run `t`.
pub(super) fn run(t: &Test) -> Result<Value, ToolError> {
    let pattern = t.pattern.replace("\\/", "/");
    let re = RegexBuilder::new(&pattern)
        .case_insensitive(t.flags.contains('i'))
        .multi_line(t.flags.contains('m'))
        .dot_matches_new_line(t.flags.contains('s'))
        .ignore_whitespace(t.flags.contains('x'))
        .size_limit(1 << 20)
        .build()
        .map_err(|e| ToolError::Input(format!("regex: {e}")))?;
    let names: Vec<Option<&str>> = re.capture_names().collect();
    let results: Vec<Value> = t
        .strings
        .iter()
        .map(|s| {
            let matches: Vec<Value> = re
                .captures_iter(s)
                .take(MAX_MATCHES)
                .map(|caps| {
                    let groups: Vec<Value> = caps
                        .iter()
                        .enumerate()
                        .skip(1)
                        .map(|(i, g)| {
                            let name = names.get(i).copied().flatten();
                            json!({"index": i, "name": name,
                                "text": g.map(|m| m.as_str()), "span": g.map(|m| [m.start(), m.end()])})
                        })
                        .collect();
                    let whole = caps.get(0);
                    json!({"text": whole.map(|m| m.as_str()),
                        "span": whole.map(|m| [m.start(), m.end()]), "groups": groups})
                })
                .collect();
            json!({"string": s, "is_match": !matches.is_empty(), "matches": matches})
        })
        .collect();
    Ok(json!({"pattern": pattern, "results": results}))
}
