//! A call syntax derived from what a chat template renders, for templates whose calls no
//! registry entry reads back ([`super::probe`] found none). Three conversations are
//! rendered — the assistant answering with text, with one call, with two calls — and the
//! differences give the call region; in it the call is found as a JSON object naming the
//! tool, as the tool's name followed by its JSON arguments, as tagged parameters, as Python
//! calls `NAME(key=VALUE)`, or in Gemma's spelling `NAME{key:QtextQ}` with the template's
//! quote marker `Q`; the text around one call and between two gives the section, call and
//! separator markers.
//!
//! This module must not guess: when the regions do not fit one of those shapes the same way
//! in the one- and two-call renders, or the syntax found does not read those calls back
//! exactly with the strict parser, it refuses with what it found. (Python and Gemma-spelled
//! calls are the exception on values only: templates write those values their own way —
//! `{{ value }}` unquoted, numbers quoted — so the frame, names and keys must fit, and the
//! syntax must read back the calls toolgram itself writes in it.) A template that renders
//! neither tools nor calls writes no call of its own: nothing is derived from it. Reasoning
//! and text markers are not read here: [`super::turn`] reads them and
//! [`super::detect`] gives them to whichever syntax it found. A derived syntax lives
//! for the process (its texts are leaked once per derivation attempt, refused ones
//! included).

use super::TemplateRenderer;
use crate::parse::parse_output;
use crate::syntax::{CallBody, CallSyntax, Piece};
use crate::{ChatMessage, ToolCall, ToolChoice};
use serde_json::{Map, Value, json};
use thiserror::Error;

use super::probe::{
    PROBE_ANSWER as TEXT, PROBE_ID, PROBE_TOOL as TOOL, probe_args, probe_id, probe_tools as tools,
};

/// Why no syntax could be derived.
#[derive(Debug, Error, PartialEq)]
pub enum DeriveError {
    /// The template does not write an assistant's calls.
    #[error("the chat template writes no tool calls of its own")]
    NoCalls,
    /// The calls it writes fit no shape consistently.
    #[error(
        "no call syntax can be derived from the chat template: its rendered call {one:?} \
         (two calls: {two:?}) is neither a JSON object naming the tool, the tool's name then \
         its JSON arguments, tagged parameters, Python calls nor Gemma's quoted keys, the \
         same way for one call and for two"
    )]
    Inconsistent {
        /// The call region of the one-call render.
        one: String,
        /// The call region of the two-call render.
        two: String,
    },
}

/// A derived syntax and how it was read.
#[derive(Debug)]
pub struct Derived {
    /// The syntax (leaked: it lives for the process).
    pub syntax: &'static CallSyntax,
    /// What was found, in words.
    pub how: String,
}

/// The whole conversation `[user, assistant]`, the assistant's turn given by `calls` (none:
/// a text answer).
fn render(t: &dyn TemplateRenderer, calls: usize, content: &Value) -> Option<String> {
    let tools = tools()?;
    let user = json!({"role": "user", "content": "What will the weather be?"});
    let assistant = if calls == 0 {
        json!({"role": "assistant", "content": TEXT})
    } else {
        let calls: Vec<Value> = (0..calls)
            .map(|i| {
                json!({"id": probe_id(i), "type": "function",
                "function": {"name": TOOL, "arguments": probe_args(i).to_string()}})
            })
            .collect();
        json!({"role": "assistant", "content": content, "tool_calls": calls})
    };
    let msgs: Vec<ChatMessage> = serde_json::from_value(json!([user, assistant])).ok()?;
    t.render_turns(&msgs, &tools, false).ok()
}

/// Derive the syntax `t` writes calls in.
pub fn derive(t: &dyn TemplateRenderer) -> Result<Derived, DeriveError> {
    let (one, two) = regions(t).ok_or(DeriveError::NoCalls)?;
    let refuse = || DeriveError::Inconsistent {
        one: one.clone(),
        two: two.clone(),
    };
    let shapes = [json_object, name_then_args, tagged, pythonic, quoted_keys];
    let found = shapes
        .iter()
        .find_map(|shape| shape(&one, &two))
        .ok_or_else(refuse)?;
    let how = format!("{}; {}", found.how, found.frame.describe());
    let syntax = leak_syntax(&found);
    // The derived syntax must read back the calls it was derived from, exactly.
    let tools = tools().ok_or_else(refuse)?;
    let reads = |text: &str, n: usize| {
        parse_output(text, syntax, &tools, &ToolChoice::Required).is_ok_and(|out| {
            out.tool_calls.len() == n
                && out
                    .tool_calls
                    .iter()
                    .enumerate()
                    .all(|(i, c)| c.name == TOOL && c.arguments == probe_args(i))
        })
    };
    let read_back = match found.values_as_written {
        true => reads(one.trim(), 1) && reads(two.trim(), 2),
        // Values the template spells its own way are not read; the syntax must still read
        // back the calls it writes itself, and the template's calls matched its frame.
        false => [1, 2].iter().all(|&n| reads(&own_spelling(syntax, n), n)),
    };
    if !read_back {
        return Err(refuse());
    }
    Ok(Derived { syntax, how })
}

/// The call regions of the one- and two-call renders: what differs from the text answer.
pub fn regions(t: &dyn TemplateRenderer) -> Option<(String, String)> {
    // A template that writes neither tools nor calls leaves both to toolgram's own
    // spelling: reading that back would derive toolgram's syntax, not the template's.
    if !t.renders_tools() && !t.renders_calls() {
        return None;
    }
    [json!(""), Value::Null].iter().find_map(|content| {
        let text = render(t, 0, content)?;
        let one = render(t, 1, content)?;
        let two = render(t, 2, content)?;
        let p = common_prefix(common_prefix(&text, &one), &two).len();
        let s = common_suffix(common_suffix(&text, &one), &two).len();
        let cut = |x: &str| x.get(p..x.len().saturating_sub(s)).map(str::to_owned);
        // A template that names the tool only in its tools list writes no call.
        Some((cut(&one)?, cut(&two)?)).filter(|(one, _)| one.contains(TOOL))
    })
}

/// The longest start `a` and `b` share.
pub(crate) fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let n = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    &a[..n]
}

/// The longest end `a` and `b` share.
pub(crate) fn common_suffix<'a>(a: &'a str, b: &str) -> &'a str {
    let n: usize = a
        .chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(c, _)| c.len_utf8())
        .sum();
    &a[a.len() - n..]
}

/// The markers around the calls.
#[derive(Debug)]
struct Frame {
    section_open: String,
    section_close: String,
    call_open: String,
    call_close: String,
    separator: String,
}

impl Frame {
    /// From the text before the first call, after the last, and between two: the per-call
    /// opener is what the text before and between share at their ends, the per-call closer
    /// what the text after and between share at their starts.
    fn from(before: &str, between: &str, after: &str) -> Self {
        let call_open = common_suffix(before, between).to_owned();
        let rest = &between[..between.len() - call_open.len()];
        let call_close = common_prefix(after, rest).to_owned();
        // Whitespace a template writes before each call or after it (`\n<function_call> `)
        // separates calls; at the ends of the section it is layout, not a marker.
        let (open_ws, open) = split_leading_ws(&call_open);
        let (close, close_ws) = split_trailing_ws(&call_close);
        let section_open = format!("{}{open_ws}", &before[..before.len() - call_open.len()]);
        let section_close = format!("{close_ws}{}", &after[call_close.len()..]);
        Self {
            section_open: section_open.trim_start().to_owned(),
            section_close: section_close.trim_end().to_owned(),
            separator: format!("{close_ws}{}{open_ws}", &rest[call_close.len()..]),
            call_open: open.to_owned(),
            call_close: close.to_owned(),
        }
    }

    /// Clean, and none of the body's `markers` names the probe's data.
    fn clean_around(&self, markers: &[&str]) -> bool {
        self.clean() && !markers.iter().any(|m| names_data(m))
    }

    /// No marker holds the probe's data (the tool's name or an argument): a template that
    /// names the tool outside the call (a `to=NAME` header) is not a fixed marker.
    fn clean(&self) -> bool {
        ![
            &self.section_open,
            &self.section_close,
            &self.call_open,
            &self.call_close,
            &self.separator,
        ]
        .iter()
        .any(|m| names_data(m))
    }

    fn describe(&self) -> String {
        format!(
            "section {:?}…{:?}, each call {:?}…{:?}, between calls {:?}",
            self.section_open, self.section_close, self.call_open, self.call_close, self.separator
        )
    }
}

/// `text` as (its leading whitespace, the rest).
fn split_leading_ws(text: &str) -> (&str, &str) {
    text.split_at(text.len() - text.trim_start().len())
}

/// `text` as (all but its trailing whitespace, that whitespace).
fn split_trailing_ws(text: &str) -> (&str, &str) {
    text.split_at(text.trim_end().len())
}

/// A shape found in the call regions.
struct Found {
    body: CallBody,
    frame: Frame,
    /// What was found, in words.
    how: String,
    /// The key of the arguments object (JSON shapes).
    args_key: String,
    /// The key of a call id after the arguments (JSON objects keyed `name`).
    id_key: String,
    /// The template writes argument values as the model does (read back exactly); false
    /// where it writes them its own way (`{{ value }}` in a Python call).
    values_as_written: bool,
}

impl Found {
    /// `body` in `frame`, found as `how` says: arguments under `arguments`, no id key, values
    /// as the model writes them (`values_as_written` false where the template spells them
    /// its own way).
    fn new(body: CallBody, frame: Frame, how: String, values_as_written: bool) -> Self {
        Self {
            body,
            frame,
            how,
            args_key: "arguments".into(),
            id_key: String::new(),
            values_as_written,
        }
    }
}

type Shape = Option<Found>;

/// What a key of a rendered call object holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Key {
    /// The tool's name.
    Name,
    /// The arguments.
    Args,
    /// The call's id.
    Id,
    /// The arguments under the tool's name as key (`{"NAME": {…}}`).
    NamedArgs,
    /// The whole call as OpenAI's API writes it (`{"id", "type", "function": {…}}`).
    OpenAi,
}

/// A rendered call object: where it starts and ends, and its keys in order.
type JsonCall = (usize, usize, Vec<(String, Key)>);

/// JSON objects in `text` holding the `i`-th probe call: each key the tool's name, its
/// arguments, its id, or the arguments under the name; nothing else.
fn json_calls(text: &str, want: &[Value]) -> Vec<JsonCall> {
    let mut out = Vec::new();
    let mut from = 0;
    for (n, w) in want.iter().enumerate() {
        let id = probe_id(n);
        let found = text[from..].match_indices('{').find_map(|(i, _)| {
            let at = from + i;
            let mut s =
                serde_json::Deserializer::from_str(&text[at..]).into_iter::<Map<String, Value>>();
            let obj = s.next()?.ok()?;
            let openai = json!({"id": id, "type": "function",
                "function": {"name": TOOL, "arguments": w}});
            let function_keys = obj
                .get("function")
                .and_then(Value::as_object)
                .map(|f| f.keys().eq(["name", "arguments"].iter()));
            if Value::Object(obj.clone()) == openai
                && obj.keys().eq(["id", "type", "function"].iter())
                && function_keys == Some(true)
            {
                return Some((
                    at,
                    at + s.byte_offset(),
                    vec![("function".into(), Key::OpenAi)],
                ));
            }
            let keys: Vec<(String, Key)> = obj
                .iter()
                .map(|(k, v)| {
                    let role = match v {
                        v if v.as_str() == Some(TOOL) => Key::Name,
                        v if v == w && k == TOOL => Key::NamedArgs,
                        v if v == w => Key::Args,
                        v if v.as_str() == Some(id.as_str()) => Key::Id,
                        _ => return None,
                    };
                    Some((k.clone(), role))
                })
                .collect::<Option<_>>()?;
            let roles: Vec<Key> = keys.iter().map(|(_, r)| *r).collect();
            // An id after the arguments is the `Json` body's (its name key is `name`); an
            // id first is `JsonKeyed`'s. The grammar writes the keys in that order.
            let name_is_name = keys.iter().any(|(k, r)| *r == Key::Name && k == "name");
            let fits = match roles.as_slice() {
                [Key::Name, Key::Args] | [Key::Id, Key::Name, Key::Args] | [Key::NamedArgs] => true,
                [Key::Name, Key::Args, Key::Id] => name_is_name,
                _ => false,
            };
            fits.then(|| (at, at + s.byte_offset(), keys))
        });
        match found {
            Some(f) => {
                from = f.1;
                out.push(f);
            }
            None => return Vec::new(),
        }
    }
    out
}

fn json_object(one: &str, two: &str) -> Shape {
    let [a] = json_calls(one, &[probe_args(0)]).try_into().ok()?;
    let [b, c] = json_calls(two, &[probe_args(0), probe_args(1)])
        .try_into()
        .ok()?;
    if a.2 != b.2 || b.2 != c.2 || one[..a.0] != two[..b.0] || one[a.1..] != two[c.1..] {
        return None;
    }
    let frame = Frame::from(&one[..a.0], &two[b.1..c.0], &one[a.1..]);
    if !frame.clean() {
        return None;
    }
    let key = |role: Key| {
        a.2.iter()
            .find(|(_, r)| *r == role)
            .map_or("", |(k, _)| k.as_str())
    };
    let (name_key, args_key, id_key) = (key(Key::Name), key(Key::Args), key(Key::Id));
    let id_first = a.2.first().is_some_and(|(_, r)| *r == Key::Id);
    let (body, syntax_id_key, how) = if !key(Key::OpenAi).is_empty() {
        let how = "a call as OpenAI's API writes it (id, type, function: name, arguments)";
        (CallBody::OpenAiJson, "", how.to_owned())
    } else if key(Key::NamedArgs) == TOOL {
        let how = "a JSON object NAME: ARGUMENTS".to_owned();
        (CallBody::JsonNamedKey, "", how)
    } else if name_key == "name" && !id_first {
        // `{"name": …, "arguments": …[, ID_KEY: …]}`: an id goes after the arguments.
        let how = format!("a JSON object \"name\": NAME, {args_key:?}: ARGUMENTS");
        (CallBody::Json, id_key, how)
    } else {
        let body = CallBody::JsonKeyed {
            name_key: leak(name_key),
            id_key: leak(id_key),
        };
        let how = format!("a JSON object {name_key:?}: NAME, {args_key:?}: ARGUMENTS");
        (body, "", how)
    };
    let how = match id_key {
        "" => how,
        k => format!("{how}, {k:?}: the call's id"),
    };
    Some(Found {
        body,
        frame,
        how,
        args_key: if args_key.is_empty() {
            "arguments"
        } else {
            args_key
        }
        .to_owned(),
        id_key: syntax_id_key.to_owned(),
        values_as_written: true,
    })
}

/// Where the arguments object `want` starts and ends at or after `from`.
fn args_at(text: &str, from: usize, want: &Value) -> Option<(usize, usize)> {
    text[from..].match_indices('{').find_map(|(i, _)| {
        let at = from + i;
        let mut s = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        (s.next()?.ok()? == *want).then(|| (at, at + s.byte_offset()))
    })
}

/// `text` cut where the call id `id` sits in it: (before the id, after it).
fn cut_id<'a>(text: &'a str, id: &str) -> Option<(&'a str, &'a str)> {
    text.find(id).map(|i| (&text[..i], &text[i + id.len()..]))
}

/// The name, then its JSON arguments; a call id the template writes right before the name
/// (`ID<|tool_call:name|>NAME`) or between name and arguments (`NAME[CALL_ID]ID[ARGS]`)
/// becomes the body's `id_first` or `id_marker`.
fn name_then_args(one: &str, two: &str) -> Shape {
    let n1 = one.find(TOOL)?;
    let (a1, e1) = args_at(one, n1, &probe_args(0))?;
    let n2 = two.find(TOOL)?;
    let (a2, e2) = args_at(two, n2, &probe_args(0))?;
    let m2 = n2 + TOOL.len() + two[n2 + TOOL.len()..].find(TOOL)?;
    let (a3, e3) = args_at(two, m2, &probe_args(1))?;
    let name_end = &one[n1 + TOOL.len()..a1];
    let second_end = name_end.replace(&probe_id(0), &probe_id(1));
    let consistent = one[..n1] == two[..n2]
        && two[n2 + TOOL.len()..a2] == *name_end
        && two[m2 + TOOL.len()..a3] == second_end
        && one[e1..] == two[e3..];
    if !consistent || name_end.contains('{') {
        return None;
    }
    // An id between the name and the arguments.
    let (id_marker, name_end) = cut_id(name_end, &probe_id(0)).unwrap_or(("", name_end));
    // An id right before the name: the text after it is the same for both calls.
    let (before, id_first) = cut_id(&one[..n1], &probe_id(0)).unwrap_or((&one[..n1], ""));
    let (between, second_first) = cut_id(&two[e2..m2], &probe_id(1)).unwrap_or((&two[e2..m2], ""));
    if id_first != second_first || (!id_first.is_empty() && !id_marker.is_empty()) {
        return None;
    }
    let frame = Frame::from(before, between, &one[e1..]);
    if !frame.clean_around(&[id_first, id_marker, name_end]) {
        return None;
    }
    let body = CallBody::NameThenArgs {
        name_prefix: "",
        id_first: leak(id_first),
        name_end: leak(name_end),
        id_marker: leak(id_marker),
        name_is_id: false,
        quote: "",
    };
    let id = match (id_first, id_marker) {
        ("", "") => String::new(),
        ("", marker) => format!(" (the call's id after the name and {marker:?})"),
        (first, _) => format!(" (the call's id, then {first:?}, before the name)"),
    };
    let how = format!("the name, {name_end:?}, then the arguments as JSON{id}");
    Some(Found::new(body, frame, how, true))
}

/// `s` kept for the life of the process (a derived syntax is registered once and lives on).
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

/// Whether marker text holds the probe's data.
fn names_data(marker: &str) -> bool {
    [TOOL, "Probeville", "Testburg", PROBE_ID]
        .iter()
        .any(|d| marker.contains(d))
}

/// Positions of `words` in order from `from`: the end of each.
fn in_order(text: &str, from: usize, words: &[&str]) -> Option<Vec<(usize, usize)>> {
    let mut at = from;
    let mut out = Vec::new();
    for w in words {
        let i = at + text[at..].find(w)?;
        at = i + w.len();
        out.push((i, at));
    }
    Some(out)
}

fn tagged(one: &str, two: &str) -> Shape {
    // The name nearest the first key (a header may name the tool earlier: `to=NAME`).
    let first = in_order(one, 0, &[TOOL, "city"])?;
    let name_at = one[..first[1].0].rfind(TOOL)?;
    let words = [TOOL, "city", "Probeville", "days", "3"];
    let p = in_order(one, name_at, &words)?;
    let [name, city, pv, days, three] = p.as_slice() else {
        return None;
    };
    let after_name = &one[name.1..city.0];
    let gap = &one[city.1..pv.0];
    let between = &one[pv.1..days.0];
    if gap != &one[days.1..three.0] || gap.is_empty() {
        return None;
    }
    // The opener the name and a value share before the next key, from its first `<` when it
    // has one (`</arg>\n` closes a value, `<arg name="` opens a key).
    let shared = common_suffix(after_name, between);
    let key_open = shared.find('<').map_or(shared, |i| &shared[i..]);
    let value_close = &between[..between.len() - key_open.len()];
    let name_close = &after_name[..after_name.len() - key_open.len()];
    if key_open.trim().is_empty() || value_close.trim().is_empty() {
        return None;
    }
    // The two-call render: the same tags around the second call's values.
    let q = in_order(two, 0, &[TOOL, "Probeville", "3", TOOL, "Testburg", "5"])?;
    let first_end = q[2].1 + value_close.len();
    let second_end = q[5].1 + value_close.len();
    let after = one.get(three.1..)?.strip_prefix(value_close)?;
    let consistent = one[..name.0] == two[..q[0].0]
        && two.get(q[2].1..first_end) == Some(value_close)
        && two.get(q[5].1..second_end) == Some(value_close)
        && two.get(second_end..) == Some(after);
    if !consistent {
        return None;
    }
    // A closing tag holding the tool's name puts the second call's name inside the first
    // call's tags: no frame between them.
    let frame = Frame::from(&one[..name.0], two.get(first_end..q[3].0)?, after);
    if !frame.clean_around(&[name_close, key_open, gap, value_close]) {
        return None;
    }
    let body = CallBody::Tagged {
        name_open: "",
        name_again: "",
        name_close: leak(name_close),
        key_open: leak(key_open),
        key_close: leak(gap),
        tag_end: "",
        value_open: "",
        value_close: leak(value_close),
        attributes: &[],
        call_end: "",
    };
    let how = format!(
        "tagged parameters: the name then {name_close:?}, each parameter {key_open:?}KEY{gap:?}VALUE{value_close:?}"
    );
    Some(Found::new(body, frame, how, true))
}

/// Where the call `NAME(…)` whose `(` is at `open` ends (after its `)`), Python's quotes
/// and brackets skipped.
fn call_end(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.get(open..)?.char_indices() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (c == ')').then_some(open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The calls `NAME(` … `)` in `text` from `from`, each naming both probe keys in order:
/// (start, end).
fn python_call(text: &str, from: usize) -> Option<(usize, usize)> {
    let call = format!("{TOOL}(");
    let start = from + text.get(from..)?.find(&call)?;
    let end = call_end(text, start + TOOL.len())?;
    let args = &text[start + call.len()..end - 1];
    in_order(args, 0, &["city=", "days="])?;
    Some((start, end))
}

/// Python calls `[NAME(key=VALUE, …), …]`: the frame read around them; the values are the
/// template's own spelling (ToolACE and Llama 3.2 write `{{ value }}` unquoted, Llama 4
/// quotes every one), not read.
fn pythonic(one: &str, two: &str) -> Shape {
    let (s1, e1) = python_call(one, 0)?;
    let (s2, e2) = python_call(two, 0)?;
    let (s3, e3) = python_call(two, e2)?;
    if one[..s1] != two[..s2] || one[e1..] != two[e3..] {
        return None;
    }
    let frame = Frame::from(&one[..s1], &two[e2..s3], &one[e1..]);
    if !frame.clean() {
        return None;
    }
    let how = "Python calls NAME(key=VALUE, …) (the template's own spelling of values is not \
               read)";
    Some(Found::new(CallBody::Pythonic, frame, how.into(), false))
}

/// The call `NAME{city:QProbevilleQ,days:…}` at or after `from`, strings between a quote
/// marker `Q` (numbers bare or quoted too): (start, end, Q).
fn quoted_call<'a>(
    text: &'a str,
    from: usize,
    city: &str,
    days: &str,
) -> Option<(usize, usize, &'a str)> {
    let open = format!("{TOOL}{{city:");
    let start = from + text.get(from..)?.find(&open)?;
    let rest = &text[start + open.len()..];
    let quote = &rest[..rest.find(city)?];
    // A marker (`<escape>`, `<|"|>`), not a plain quote: Gemma's strings have no escapes,
    // so a `"` or `'` quote could not hold its own character.
    let marker = quote.starts_with('<') && quote.ends_with('>') && quote.len() > 2;
    if !marker || names_data(quote) {
        return None;
    }
    let tail = rest[quote.len() + city.len()..].strip_prefix(quote)?;
    let tail = tail.strip_prefix(",days:")?;
    let quoted = format!("{quote}{days}{quote}}}");
    let bare = format!("{days}}}");
    let len = [quoted, bare]
        .into_iter()
        .find(|v| tail.starts_with(v.as_str()))?
        .len();
    let end = text.len() - tail.len() + len;
    Some((start, end, quote))
}

/// Gemma's spelling `NAME{key:QtextQ,…}` with the template's own quote marker `Q`
/// (FunctionGemma's `<escape>`); numbers the template quotes are not read as strings.
fn quoted_keys(one: &str, two: &str) -> Shape {
    let (s1, e1, q) = quoted_call(one, 0, "Probeville", "3")?;
    let (s2, e2, q2) = quoted_call(two, 0, "Probeville", "3")?;
    let (s3, e3, q3) = quoted_call(two, e2, "Testburg", "5")?;
    if q != q2 || q != q3 || one[..s1] != two[..s2] || one[e1..] != two[e3..] {
        return None;
    }
    let frame = Frame::from(&one[..s1], &two[e2..s3], &one[e1..]);
    if !frame.clean() {
        return None;
    }
    let body = CallBody::NameThenArgs {
        name_prefix: "",
        id_first: "",
        name_end: "",
        id_marker: "",
        name_is_id: false,
        quote: leak(q),
    };
    let how = format!("the name then {{key:{q}text{q},…}} (bare keys, strings between {q:?})");
    Some(Found::new(body, frame, how, false))
}

/// The probe's first `n` calls written in `syntax` by toolgram's renderer.
fn own_spelling(syntax: &CallSyntax, n: usize) -> String {
    let calls: Vec<ToolCall> = (0..n)
        .map(|i| ToolCall {
            id: String::new(),
            name: TOOL.into(),
            arguments: probe_args(i),
        })
        .collect();
    syntax.render_calls(&calls)
}

/// Marker text as pieces: each `<…>` run a piece that may be one special token, the rest
/// text.
pub(crate) fn pieces(text: &str) -> &'static [Piece] {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.find('<').unwrap_or(rest.len());
        if start > 0 {
            out.push(Piece::Text(Box::leak(
                rest[..start].to_owned().into_boxed_str(),
            )));
        }
        rest = &rest[start..];
        if rest.is_empty() {
            break;
        }
        let end = rest.find('>').map_or(rest.len(), |e| e + 1);
        out.push(Piece::Token(Box::leak(
            rest[..end].to_owned().into_boxed_str(),
        )));
        rest = &rest[end..];
    }
    Box::leak(out.into_boxed_slice())
}

fn leak_syntax(found: &Found) -> &'static CallSyntax {
    let f = &found.frame;
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    Box::leak(Box::new(CallSyntax {
        name: "derived",
        aliases: &[],
        description: leak(format!("derived from the chat template: {}", found.how)),
        section_open: pieces(&f.section_open),
        section_close: pieces(&f.section_close),
        section_close_optional: false,
        call_open: pieces(&f.call_open),
        call_close: pieces(&f.call_close),
        separator: pieces(&f.separator),
        args_key: leak(found.args_key.clone()),
        id_key: leak(found.id_key.clone()),
        bare_calls: false,
        template_markers: &[],
        prompt_opens: None,
        body: found.body,
        think: None,
        noise: &[],
        text_markers: &[],
    }))
}
