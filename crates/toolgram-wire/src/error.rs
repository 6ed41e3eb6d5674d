//! [`WireError`]: a field of a body that cannot be read as its API defines it, named by its
//! path (`messages[2].content[0]`, `tool_choice`), so the caller can answer with the field.
//! This module must not choose a status code or an API's error shape.

/// A field that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{param}: {message}")]
pub struct WireError {
    /// The field's path in the body, as the API's clients name it.
    pub param: String,
    /// What is wrong with it.
    pub message: String,
}

impl WireError {
    /// The field at `param` is wrong: `message` says how.
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            param: param.into(),
            message: message.into(),
        }
    }
}
