//! Client text cut short for what the server repeats of it — notes, error messages, log lines —
//! so a 3 MB field name or header is never echoed whole. A leaf: it imports nothing of the
//! crate, so every module may use it. It must not decide what is refused.

/// `text` cut to at most `max` bytes at a character boundary, saying how long it was.
pub fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let end = (0..=max)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}… ({} bytes)", &text[..end], text.len()).into()
}
