//! Reasoning blocks (`<think>…</think>` and each family's equivalent) split from the reply,
//! following llama.cpp's semantics: with `reasoning_format` `none` nothing moves; otherwise a
//! leading open marker starts reasoning; a close marker with no opener before it means the
//! prompt opened the block (text up to it is reasoning); and when the template was rendered
//! with thinking on (and it knows of thinking) and no marker comes, text up to the first
//! call is reasoning.
//!
//! It must NOT look for calls itself: the caller passes where the first call starts.

/// How reasoning is reported (llama.cpp's `reasoning_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningFormat {
    /// Leave reasoning in `content`.
    #[default]
    None,
    /// Extract it to `reasoning_content`.
    Auto,
    /// Extract it to `reasoning_content` (DeepSeek's field name; same behaviour here).
    Deepseek,
}

/// The reply split into reasoning and the rest.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Split {
    pub reasoning: String,
    pub rest: String,
}

/// Split `text` with the marker pairs `pairs`; `first_call` is where the first call starts;
/// `template` (when known) says how the prompt opens a block.
pub(crate) fn split(
    text: &str,
    pairs: &[(&str, &str)],
    thinking: bool,
    format: ReasoningFormat,
    template: Option<&str>,
    first_call: impl Fn(&str) -> Option<usize>,
) -> Split {
    if format == ReasoningFormat::None {
        // The prompt opened the block: content keeps it whole, as the model saw it — with
        // the newline after the opener when the template writes one.
        let lead = text.trim_start();
        let newline = |open: &str| {
            template.is_some_and(|t| {
                t.contains(&format!("{open}\n")) || t.contains(&format!("{open}\\n"))
            }) && !text.starts_with('\n')
        };
        let reopened = pairs
            .iter()
            .find(|(open, close)| thinking && !lead.starts_with(open) && text.contains(close))
            .map(|(open, _)| {
                let gap = if newline(open) { "\n" } else { "" };
                format!("{open}{gap}{text}")
            });
        return Split {
            reasoning: String::new(),
            rest: reopened.unwrap_or_else(|| text.to_owned()),
        };
    }
    let lead = text.trim_start();
    for (open, close) in pairs {
        if let Some(body) = lead.strip_prefix(open) {
            return match body.find(close) {
                Some(i) => Split {
                    reasoning: body[..i].to_owned(),
                    rest: body[i + close.len()..].to_owned(),
                },
                None => until_call(body, &first_call),
            };
        }
    }
    let call_at = first_call(text).unwrap_or(text.len());
    let close = pairs
        .iter()
        .filter_map(|(_, c)| text.find(c).map(|i| (i, c.len())))
        .filter(|(i, _)| *i <= call_at)
        .min();
    // A closing marker with no opener before it: the prompt opened the block, whatever the
    // thinking setting said.
    let opened_by_prompt =
        close.filter(|(i, _)| !pairs.iter().any(|(o, _)| text[..*i].contains(o)));
    // Thinking on opens a block in the prompt only where the template knows of thinking
    // (Muse Glimmer's reasoning is a message of its own, `to=self`, never opened by it).
    let can_open = template.is_none_or(|t| {
        t.to_lowercase().contains("think") || pairs.iter().any(|(o, _)| t.contains(o))
    });
    match (opened_by_prompt, thinking) {
        (Some((i, n)), _) => Split {
            reasoning: text[..i].to_owned(),
            rest: text[i + n..].to_owned(),
        },
        (None, true) if close.is_none() && can_open => until_call(text, &first_call),
        _ => Split {
            reasoning: String::new(),
            rest: text.to_owned(),
        },
    }
}

fn until_call(body: &str, first_call: &impl Fn(&str) -> Option<usize>) -> Split {
    let i = first_call(body).unwrap_or(body.len());
    Split {
        reasoning: body[..i].to_owned(),
        rest: body[i..].to_owned(),
    }
}

/// Move complete blocks later in the text to the reasoning too (interleaved thinking).
pub(crate) fn later_blocks(split: &mut Split, pairs: &[(&str, &str)]) {
    for (open, close) in pairs {
        while let Some(i) = split.rest.find(open) {
            let Some(j) = split.rest[i + open.len()..].find(close) else {
                break;
            };
            let body_end = i + open.len() + j;
            let body = split.rest[i + open.len()..body_end].to_owned();
            if !body.trim().is_empty() {
                if !split.reasoning.trim().is_empty() {
                    split.reasoning.push('\n');
                }
                split.reasoning.push_str(&body);
            }
            split.rest.replace_range(i..body_end + close.len(), "");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &[(&str, &str)] = &[("<think>", "</think>")];

    #[test]
    fn semantics_follow_llama_cpp() {
        let none = |_: &str| None;
        let s = split(
            "<think>a</think>b",
            P,
            false,
            ReasoningFormat::Auto,
            None,
            none,
        );
        assert_eq!((s.reasoning.as_str(), s.rest.as_str()), ("a", "b"));
        let s = split("a</think>b", P, true, ReasoningFormat::Auto, None, none);
        assert_eq!((s.reasoning.as_str(), s.rest.as_str()), ("a", "b"));
        let s = split("a</think>b", P, true, ReasoningFormat::None, None, none);
        assert_eq!(s.rest, "<think>a</think>b");
        let s = split("a</think>b", P, false, ReasoningFormat::None, None, none);
        assert_eq!(s.rest, "a</think>b");
        let t = Some("{{ '<|im_start|>assistant\\n<think>\\n' }}");
        let s = split("a</think>b", P, true, ReasoningFormat::None, t, none);
        assert_eq!(s.rest, "<think>\na</think>b");
        let s = split("a</think>b", P, false, ReasoningFormat::Auto, None, none);
        assert_eq!((s.reasoning.as_str(), s.rest.as_str()), ("a", "b"));
        let s = split("just text", P, false, ReasoningFormat::Auto, None, none);
        assert_eq!(s.rest, "just text");
        let s = split(
            "plan <call>",
            P,
            true,
            ReasoningFormat::Auto,
            None,
            |t: &str| t.find("<call>"),
        );
        assert_eq!((s.reasoning.as_str(), s.rest.as_str()), ("plan ", "<call>"));
    }

    /// Thinking on, no marker in the reply: reasoning only where the template knows of
    /// thinking (Muse Glimmer's reasoning is a message of its own, never opened by it).
    #[test]
    fn thinking_opens_a_block_only_in_templates_that_know_of_it() {
        let none = |_: &str| None;
        let muse = Some("{{- '<|start|>assistant to=self<|message|>' -}}");
        let s = split("Hello", P, true, ReasoningFormat::Auto, muse, none);
        assert_eq!((s.reasoning.as_str(), s.rest.as_str()), ("", "Hello"));
        let qwen = Some("{%- if enable_thinking %}<think>{% endif %}");
        let s = split("Hello", P, true, ReasoningFormat::Auto, qwen, none);
        assert_eq!((s.reasoning.as_str(), s.rest.as_str()), ("Hello", ""));
    }
}
