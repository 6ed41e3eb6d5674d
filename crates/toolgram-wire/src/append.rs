//! One piece every stream assembler needs: a streamed text fragment appended to a JSON string
//! slot (a missing or non-string slot starts empty). This module must not know any API.

use serde_json::Value;

/// `piece` appended to the string in `slot`.
pub(crate) fn append(slot: &mut Value, piece: &str) {
    let mut s = slot.as_str().unwrap_or("").to_owned();
    s.push_str(piece);
    *slot = Value::String(s);
}
