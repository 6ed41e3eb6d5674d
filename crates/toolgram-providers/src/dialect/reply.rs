//! The pieces every dialect's replies are read with: a call from its id (or its index), its
//! tool's name and arguments, or from an object's fields; the text of a list of parts; and
//! arguments sent as a JSON string parsed. Reading only: no reply shape is known here.

use serde_json::Value;
use toolgram_core::ToolCall;

/// A call with `id`, or `call_{i}` when the reply gave none.
pub(crate) fn call(id: &str, i: usize, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: if id.is_empty() {
            format!("call_{i}")
        } else {
            id.to_owned()
        },
        name: name.to_owned(),
        arguments,
    }
}

/// The `i`th call of a reply, from an object whose fields `keys` name its id, its tool's name
/// and its arguments (as JSON, not a string).
pub(crate) fn object_call(v: &Value, i: usize, keys: [&str; 3]) -> ToolCall {
    let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
    let arguments = v.get(keys[2]).cloned().unwrap_or(Value::Null);
    call(field(keys[0]), i, field(keys[1]), arguments)
}

/// Arguments sent as a JSON string (OpenAI) parsed; a string that is not JSON is unreadable.
pub(crate) fn string_args(raw: &Value) -> Result<Value, String> {
    match raw {
        Value::String(s) => {
            serde_json::from_str(s).map_err(|e| format!("arguments are not JSON: {e}"))
        }
        other => Ok(other.clone()),
    }
}
