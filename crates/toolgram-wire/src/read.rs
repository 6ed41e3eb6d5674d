//! The pieces every API's reply reader uses: a call from its id (or its place in the reply),
//! its tool's name and its arguments; arguments sent as a JSON string parsed; a token count
//! at a JSON pointer. Reading only: this module must not know any reply's shape.

use serde_json::Value;
use toolgram_core::ToolCall;

/// A call with `id`, or `call_{i}` when the reply gave none.
pub fn call(id: &str, i: usize, name: &str, arguments: Value) -> ToolCall {
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

/// Arguments sent as a JSON string (OpenAI) parsed; a string that is not JSON is unreadable.
pub fn string_args(raw: &Value) -> Result<Value, String> {
    match raw {
        Value::String(s) => {
            serde_json::from_str(s).map_err(|e| format!("arguments are not JSON: {e}"))
        }
        other => Ok(other.clone()),
    }
}

/// The count at `pointer`, if it is one.
pub fn count(body: &Value, pointer: &str) -> Option<usize> {
    body.pointer(pointer)
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}
