//! Jinja filters and functions spelled as Python's Jinja2 and Hugging Face's environment
//! spell them, where minijinja's own differ or are missing: `tojson` is `json.dumps` (`", "`/
//! `": "` separators, no HTML escaping), `indent` keeps the text's last newline (minijinja
//! drops it, so Command R+'s `'{\n'|indent(4)` lost its line break), and `strftime_now` is
//! Python's `strftime` of the current UTC time (Llama 3's "Today Date:"). This module must
//! not render templates.

use minijinja::value::{Kwargs, Value};
use minijinja::{Error, ErrorKind};
use toolgram_core::syntax::pyjson;

/// `tojson` as Hugging Face's environment has it: Python's `json.dumps`, unescaped.
pub(crate) fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    for k in ["ensure_ascii", "sort_keys", "separators"] {
        let _: Option<Value> = kwargs.get(k)?;
    }
    kwargs.assert_all_used()?;
    let json = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    Ok(Value::from_safe_string(pyjson::to_string(&json, indent)))
}

/// Jinja2's `indent(width=4, first=False, blank=False)`, line for line: a newline is added
/// before splitting (Python's `splitlines`), lines after the first are indented unless
/// blank (or `blank`), the first only with `first`.
pub(crate) fn indent(
    text: String,
    width: Option<Value>,
    first: Option<bool>,
    blank: Option<bool>,
    kwargs: Kwargs,
) -> Result<String, Error> {
    let width = match width.or(kwargs.get::<Option<Value>>("width")?) {
        Some(w) => match w.as_str() {
            Some(s) => s.to_owned(),
            None => " ".repeat(usize::try_from(w)?),
        },
        None => " ".repeat(4),
    };
    let first = first.or(kwargs.get("first")?).unwrap_or(false);
    let blank = blank.or(kwargs.get("blank")?).unwrap_or(false);
    kwargs.assert_all_used()?;
    let text = format!("{text}\n");
    let mut lines = split_lines(&text);
    let mut out = String::with_capacity(text.len() * 2);
    if first {
        out.push_str(&width);
    }
    out.push_str(lines.next().unwrap_or_default());
    for line in lines {
        out.push('\n');
        if blank || !line.is_empty() {
            out.push_str(&width);
        }
        out.push_str(line);
    }
    Ok(out)
}

/// `strftime_now(format)`: the current UTC time in Python's `strftime` spelling.
pub(crate) fn strftime_now(format: String) -> String {
    strftime(&format, time::OffsetDateTime::now_utc())
}

/// Python's `strftime` (C locale) for the directives templates use; others are kept as
/// written.
pub(crate) fn strftime(format: &str, t: time::OffsetDateTime) -> String {
    let month = t.month().to_string();
    let weekday = t.weekday().to_string();
    let short = |s: &str| s.get(..3).unwrap_or(s).to_owned();
    let hour12 = match t.hour() % 12 {
        0 => 12,
        h => h,
    };
    let mut out = String::with_capacity(format.len() + 16);
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push('%');
            break;
        };
        let piece = match d {
            'Y' => t.year().to_string(),
            'y' => format!("{:02}", t.year().rem_euclid(100)),
            'm' => format!("{:02}", u8::from(t.month())),
            'd' => format!("{:02}", t.day()),
            'e' => format!("{:>2}", t.day()),
            'j' => format!("{:03}", t.ordinal()),
            'b' | 'h' => short(&month),
            'B' => month.clone(),
            'a' => short(&weekday),
            'A' => weekday.clone(),
            'H' => format!("{:02}", t.hour()),
            'I' => format!("{hour12:02}"),
            'M' => format!("{:02}", t.minute()),
            'S' => format!("{:02}", t.second()),
            'p' => (if t.hour() < 12 { "AM" } else { "PM" }).to_owned(),
            '%' => "%".to_owned(),
            other => format!("%{other}"),
        };
        out.push_str(&piece);
    }
    out
}

/// Python's `str.splitlines()`: lines without their endings, no empty last line.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    const BREAKS: &[char] = &[
        '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
        '\u{2029}',
    ];
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some(at) = rest.find(BREAKS) else {
            return Some(std::mem::take(&mut rest));
        };
        let line = &rest[..at];
        let len = if rest[at..].starts_with("\r\n") {
            2
        } else {
            rest[at..].chars().next().map_or(1, char::len_utf8)
        };
        rest = &rest[at + len..];
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use minijinja::Environment;

    fn render(source: &str) -> String {
        let mut env = Environment::new();
        env.add_filter("indent", indent);
        env.render_str(source, ()).expect("renders")
    }

    /// Expected values printed by Python's Jinja2 3.1.
    /// Expected values printed by Python's `datetime.strftime`.
    #[test]
    fn strftime_matches_python() {
        let t = time::OffsetDateTime::from_unix_timestamp(1_785_000_000).expect("valid");
        // datetime.fromtimestamp(1785000000, timezone.utc) = 2026-07-25 17:20:00 UTC, a Saturday.
        assert_eq!(strftime("%d %b %Y", t), "25 Jul 2026");
        assert_eq!(strftime("%B %d, %Y", t), "July 25, 2026");
        assert_eq!(strftime("%Y-%m-%d", t), "2026-07-25");
        assert_eq!(strftime("%a %A %j %y", t), "Sat Saturday 206 26");
        assert_eq!(strftime("%I:%M:%S %p %H", t), "05:20:00 PM 17");
        assert_eq!(strftime("100%% %Q %", t), "100% %Q %");
    }

    #[test]
    fn indent_matches_jinja2() {
        assert_eq!(render("{{ '{\n'|indent(4, first=true) }}"), "    {\n");
        assert_eq!(render("{{ 'a\nb\n\nc'|indent(2) }}"), "a\n  b\n\n  c");
        assert_eq!(render("{{ 'x\n'|indent(2, blank=true) }}"), "x\n  ");
        assert_eq!(render("{{ 'a\r\nb'|indent('> ') }}"), "a\n> b");
        assert_eq!(render("{{ 'a\nb'|indent(width=1, first=true) }}"), " a\n b");
        assert_eq!(render("{{ ''|indent }}"), "");
    }
}
