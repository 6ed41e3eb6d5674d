//! The Responses request's envelope besides its input and tools: its token limit's key, the
//! structured output format under `text.format`, and `reasoning.effort` as a reasoning block
//! asked for or not. Read by the server and written by the `openai-responses` provider. This
//! module must not hold a server's limits.

use crate::WireError;
use serde_json::{Map, Value};

/// The token limit's key.
pub const MAX_TOKENS: &str = "max_output_tokens";

/// Where the structured output format sits, as its clients name the path.
pub const FORMAT_PARAM: &str = "text.format";

/// The structured output format (`text.format`), if any.
pub fn format(o: &Map<String, Value>) -> Option<&Value> {
    o.get("text").and_then(|t| t.get("format"))
}

/// `reasoning: {effort}`: whether a reasoning block is asked for (`None` without the field;
/// `false` for effort `none` or `minimal`, as OpenAI's reasoning models then do not reason;
/// effort defaults to `medium`).
pub fn reasoning_asked(o: &Map<String, Value>) -> Result<Option<bool>, WireError> {
    let Some(r) = o.get("reasoning").filter(|r| !r.is_null()) else {
        return Ok(None);
    };
    let effort = match r.get("effort") {
        None | Some(Value::Null) => "medium",
        Some(Value::String(e)) => e.as_str(),
        Some(_) => {
            return Err(WireError::invalid(
                "reasoning.effort",
                "`reasoning.effort` must be a string",
            ));
        }
    };
    Ok(Some(!matches!(effort, "none" | "minimal")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reasoning_effort_asks_for_a_block_unless_none_or_minimal() {
        let asked = |v: Value| reasoning_asked(v.as_object().expect("an object"));
        assert_eq!(asked(json!({})), Ok(None));
        assert_eq!(asked(json!({"reasoning": {}})), Ok(Some(true)));
        assert_eq!(
            asked(json!({"reasoning": {"effort": "minimal"}})),
            Ok(Some(false))
        );
        assert_eq!(
            asked(json!({"reasoning": {"effort": 3}})).map_err(|e| e.param),
            Err("reasoning.effort".into())
        );
        let o = json!({"text": {"format": {"type": "json_object"}}});
        assert_eq!(
            format(o.as_object().expect("an object")),
            Some(&json!({"type": "json_object"}))
        );
    }
}
