//! The reasoning a reply carries in a Responses `encrypted_content` field: toolgram's own
//! envelope ([`ENCRYPTED_PREFIX`], then the text hex-encoded), written into replies and read
//! back when a later request gives the item back.
//!
//! This module must not build or read anything else of the API.

/// What `encrypted_content` starts with: the reasoning's text follows, hex-encoded, so a
/// later request carrying the item gives the model its earlier reasoning back.
pub const ENCRYPTED_PREFIX: &str = "toolgram.reasoning.v1:";

/// `text`'s bytes as lowercase hex.
pub fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Hex back to text; `None` when it is not hex of UTF-8.
pub fn unhex(s: &str) -> Option<String> {
    let bytes = (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}
