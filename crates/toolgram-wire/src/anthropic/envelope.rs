//! The Messages request's envelope besides its messages and tools: its token limit's key,
//! `stop_sequences`, `thinking` (its type and budget), and where a structured output format
//! sits (`output_config.format`, or the beta's top-level `output_format`). Read by the server
//! and written by the `anthropic` provider. This module must not hold a server's limits.

use crate::WireError;
use serde_json::{Map, Value};
use toolgram_core::define::request::Think;

/// The token limit's key (required by Anthropic's API).
pub const MAX_TOKENS: &str = "max_tokens";

/// `stop_sequences`: an array of strings (none without the field).
pub fn stop_sequences(o: &Map<String, Value>) -> Result<Vec<String>, WireError> {
    match o.get("stop_sequences") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                WireError::invalid("stop_sequences", "`stop_sequences` must be strings")
            }),
        Some(_) => Err(WireError::invalid(
            "stop_sequences",
            "`stop_sequences` must be an array of strings",
        )),
    }
}

/// `thinking`: the reasoning block asked for (`enabled`: one must open the reply,
/// `adaptive`: one may) and its `budget_tokens`; `None` without it or when disabled.
pub fn thinking(o: &Map<String, Value>) -> Option<(Think, Option<usize>)> {
    let t = o.get("thinking").filter(|t| !t.is_null())?;
    let think = match t.get("type").and_then(Value::as_str) {
        Some("enabled") => Think::Required,
        Some("adaptive") => Think::Optional,
        _ => return None,
    };
    let budget = t
        .get("budget_tokens")
        .and_then(Value::as_u64)
        .and_then(|b| usize::try_from(b).ok());
    Some((think, budget))
}

/// The structured output format and the path its clients name it by: the beta's top-level
/// `output_format` where given, else `output_config.format`.
pub fn output_format(o: &Map<String, Value>) -> (Option<&Value>, &'static str) {
    match o.get("output_format").filter(|f| !f.is_null()) {
        Some(f) => (Some(f), "output_format"),
        None => (
            o.get("output_config").and_then(|c| c.get("format")),
            "output_config.format",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_envelope_reads_stops_thinking_and_the_format_where_each_api_version_puts_it() {
        let o = body(json!({"stop_sequences": ["\n\nHuman:"],
            "thinking": {"type": "enabled", "budget_tokens": 2048},
            "output_config": {"format": {"type": "json_schema"}}}));
        assert_eq!(stop_sequences(&o), Ok(vec!["\n\nHuman:".to_owned()]));
        assert_eq!(thinking(&o), Some((Think::Required, Some(2048))));
        assert_eq!(output_format(&o).1, "output_config.format");
        let beta = body(
            json!({"output_format": {"type": "json_schema"}, "thinking": {"type": "disabled"}}),
        );
        assert_eq!(output_format(&beta).1, "output_format");
        assert_eq!(thinking(&beta), None);
        let bad = body(json!({"stop_sequences": "stop"}));
        assert_eq!(
            stop_sequences(&bad).map_err(|e| e.param),
            Err("stop_sequences".into())
        );
    }
}
