//! Markers a chat template writes itself — special-token literals such as `<|im_end|>`,
//! `<|END_OF_TURN_TOKEN|>`, `<|channel>`, `<｜Assistant｜>` — read from the template's text:
//! a reply never carries them as content, and a run of them at the start (with a bare
//! channel or role word between, `<|open|>response<|sep|>`) is a header, not text.
//!
//! This module must not know any family: what counts as a marker comes from the template.

/// The special-token literals in `template`, longest first.
pub(crate) fn template_markers(template: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, _) in template.match_indices('<') {
        let rest = &template[i + 1..];
        let Some(end) = rest.find('>') else { continue };
        let body = &rest[..end];
        let bar = |c: char| c == '|' || c == '｜';
        let plain = |c: char| !c.is_whitespace() && !"<>'\"{}%#".contains(c);
        if body.chars().count() >= 2
            && body.chars().count() <= 48
            && body.chars().all(plain)
            && (body.starts_with(bar) || body.ends_with(bar))
            && body.chars().any(|c| c.is_alphanumeric())
        {
            let m = format!("<{body}>");
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out.sort_by_key(|m| std::cmp::Reverse(m.len()));
    out
}

/// `content` without the template's markers: a leading header (markers, with at most one
/// bare word between two of them) dropped whole, every other marker removed.
pub(crate) fn strip(content: &str, markers: &[String]) -> String {
    if markers.is_empty() {
        return content.to_owned();
    }
    let starts = |t: &str| markers.iter().find(|m| t.starts_with(m.as_str())).cloned();
    let mut rest = content.trim_start();
    while let Some(m) = starts(rest) {
        rest = &rest[m.len()..];
        let word = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        // A word between two markers is a channel or role name when text follows them.
        if let Some(next) = starts(&rest[word..]).filter(|_| word > 0)
            && !rest[word + next.len()..].trim().is_empty()
        {
            rest = &rest[word..];
        }
        rest = rest.trim_start();
    }
    let mut out = rest.to_owned();
    for m in markers {
        out = out.replace(m.as_str(), "");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_come_from_the_template_text() {
        let t = "{{- '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{% if x < y %}<think>{{ m }}<|END_OF_TURN_TOKEN|>";
        let m = template_markers(t);
        assert_eq!(
            m,
            [
                "<|START_OF_TURN_TOKEN|>",
                "<|END_OF_TURN_TOKEN|>",
                "<|CHATBOT_TOKEN|>"
            ]
        );
        assert!(template_markers("<｜Assistant｜><|channel>").len() == 2);
    }

    #[test]
    fn a_leading_header_and_stray_markers_are_not_content() {
        let m = vec![
            "<|open|>".to_owned(),
            "<|sep|>".to_owned(),
            "<|end|>".to_owned(),
        ];
        assert_eq!(strip("<|open|>response<|sep|>Hello<|end|>", &m), "Hello");
        assert_eq!(
            strip("Plain text, no markers", &m),
            "Plain text, no markers"
        );
        assert_eq!(strip("<|open|>Hello there", &m), "Hello there");
    }
}
