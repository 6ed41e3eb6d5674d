//! Runaway calls inside one reply: a reply that may hold several calls and writes a call that
//! adds nothing to the ones before it has started the loop greedy decoding of a small model
//! does not leave. Two shapes are caught, both measured on BFCL `parallel` replies:
//! - **repeat**: the same tool with the same arguments (JSON values, key order aside) as an
//!   earlier call of the reply. A cycle through a set of calls (`A B C A …`) is caught here,
//!   at its first repeat.
//! - **counter**: the same tool with arguments of the same shape as an earlier call of the
//!   reply, differing only in numbers that the conversation never wrote (`height: 7`, `8`, `9`
//!   after the user gave 6 and 5.6) or in booleans (`model_3d: true`, then `false`).
//!
//! A number counts as written when its value appears as a number in a message's text or in the
//! arguments of a call made earlier in the conversation. A number given only in words ("three
//! days") is not written: a reply enumerating `day: 1, 2, 3` for it is read as a counter.
//!
//! Pure: it reports, it must not drop calls or stop a reply itself (the engine's reply guard
//! does, at the end of each call).

use crate::define::message::ChatMessage;
use crate::define::tool::ToolCall;
use serde_json::Value;

/// The numbers a conversation wrote.
#[derive(Debug, Clone, Default)]
pub struct Written {
    numbers: Vec<f64>,
}

impl Written {
    /// The numbers in `messages`: their text and their calls' arguments.
    pub fn from_messages(messages: &[ChatMessage]) -> Self {
        let mut numbers = Vec::new();
        for m in messages {
            if let Some(text) = &m.content {
                numbers_in(text, &mut numbers);
            }
            for c in m.tool_calls.iter().flatten() {
                numbers_in(&c.function.arguments, &mut numbers);
            }
        }
        numbers.sort_by(f64::total_cmp);
        numbers.dedup();
        Self { numbers }
    }

    fn has(&self, n: f64) -> bool {
        self.numbers.binary_search_by(|x| x.total_cmp(&n)).is_ok()
    }
}

/// Every `123` and `1.5` in `text` (a sign, exponent or thousands separator is not read:
/// `5,10` is 5 and 10, as the user who wrote it meant).
fn numbers_in(text: &str, out: &mut Vec<f64>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        if let Ok(n) = text[start..i].parse::<f64>() {
            out.push(n);
        }
    }
}

/// How a call runs away from an earlier call of its reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunawayKind {
    /// The same tool and arguments.
    Repeat,
    /// The same tool and shape; these JSON pointers differ, each in a number the conversation
    /// never wrote or in a boolean.
    Counter(Vec<String>),
}

/// A call that runs away from call `of` of the same reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runaway {
    /// Index of the earlier call in the reply.
    pub of: usize,
    /// How.
    pub kind: RunawayKind,
}

impl Runaway {
    /// One line for the reply's `toolgram` object and the log.
    pub fn reason(&self) -> String {
        match &self.kind {
            RunawayKind::Repeat => format!("repeats call {} of this reply", self.of),
            RunawayKind::Counter(pointers) => format!(
                "call {} of this reply with only {} changed to values the conversation never gave",
                self.of,
                pointers.join(", ")
            ),
        }
    }
}

/// Whether `call` runs away from one of `earlier` (the calls before it in the reply); a repeat
/// is reported before a counter.
pub fn runaway(earlier: &[ToolCall], call: &ToolCall, written: &Written) -> Option<Runaway> {
    let same_tool = || {
        earlier
            .iter()
            .enumerate()
            .filter(|(_, e)| e.name == call.name)
    };
    if let Some((of, _)) = same_tool().find(|(_, e)| e.arguments == call.arguments) {
        return Some(Runaway {
            of,
            kind: RunawayKind::Repeat,
        });
    }
    same_tool().find_map(|(of, e)| {
        let mut changed = Vec::new();
        let mut pointer = String::new();
        counter_only(
            &e.arguments,
            &call.arguments,
            written,
            &mut pointer,
            &mut changed,
        )
        .then_some(Runaway {
            of,
            kind: RunawayKind::Counter(changed),
        })
    })
}

/// Whether `new` has `old`'s shape and differs only in unwritten numbers and booleans, the
/// pointers of which are pushed to `changed`.
fn counter_only(
    old: &Value,
    new: &Value,
    written: &Written,
    pointer: &mut String,
    changed: &mut Vec<String>,
) -> bool {
    let len = pointer.len();
    let ok = match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, v)| {
                    b.get(k).is_some_and(|w| {
                        pointer.push('/');
                        pointer.push_str(&k.replace('~', "~0").replace('/', "~1"));
                        let ok = counter_only(v, w, written, pointer, changed);
                        pointer.truncate(len);
                        ok
                    })
                })
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).enumerate().all(|(i, (v, w))| {
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    let ok = counter_only(v, w, written, pointer, changed);
                    pointer.truncate(len);
                    ok
                })
        }
        _ if old == new => true,
        (Value::Number(_), Value::Number(n)) => {
            let unwritten = n.as_f64().is_some_and(|n| !written.has(n));
            if unwritten {
                changed.push(pointer.clone());
            }
            unwritten
        }
        (Value::Bool(_), Value::Bool(_)) => {
            changed.push(pointer.clone());
            true
        }
        _ => false,
    };
    if !ok {
        changed.clear();
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::super::repeat::tests::call;
    use super::*;
    use serde_json::json;

    fn said(text: &str) -> Written {
        Written::from_messages(&[ChatMessage::text("user", text)])
    }

    /// BFCL parallel 4, as the default model wrote it under `tool_choice: required`.
    #[test]
    fn invented_numbers_after_the_given_ones_are_a_counter() {
        let w = said(
            "Calculate the body mass index for a person who is 6 feet tall and weighs 80 kg, \
             also for a person who is 5.6 feet and weighs 60 kg.",
        );
        let reply = [
            call("bmi", json!({"height": 6, "weight": 80})),
            call("bmi", json!({"height": 5.6, "weight": 60})),
        ];
        assert_eq!(runaway(&reply[..1], &reply[1], &w), None);
        let third = call("bmi", json!({"height": 7, "weight": 70}));
        assert_eq!(
            runaway(&reply, &third, &w),
            Some(Runaway {
                of: 0,
                kind: RunawayKind::Counter(vec!["/height".into(), "/weight".into()])
            })
        );
    }

    #[test]
    fn given_numbers_are_never_a_counter() {
        // BFCL parallel 7: "5,10 and 15" gives three numbers.
        let w = said("Find the factorial of 5,10 and 15.");
        let reply = [call("f", json!({"n": 5})), call("f", json!({"n": 10}))];
        assert_eq!(runaway(&reply, &call("f", json!({"n": 15})), &w), None);
        assert!(runaway(&reply, &call("f", json!({"n": 16})), &w).is_some());
    }

    #[test]
    fn a_repeat_is_caught_whatever_the_key_order() {
        let reply = [call("a", json!({"x": 1, "y": "s"})), call("b", json!({}))];
        assert_eq!(
            runaway(&reply, &call("a", json!({"y": "s", "x": 1})), &said("")),
            Some(Runaway {
                of: 0,
                kind: RunawayKind::Repeat
            })
        );
    }

    #[test]
    fn a_flipped_flag_is_a_counter_a_changed_string_or_shape_is_not() {
        let w = said("human HbA1c and rat hemoglobin with 3D models");
        let first = call(
            "p",
            json!({"name": "human HbA1c", "model_3d": true, "ids": [1]}),
        );
        let reply = std::slice::from_ref(&first);
        let flipped = call(
            "p",
            json!({"name": "human HbA1c", "model_3d": false, "ids": [1]}),
        );
        assert_eq!(
            runaway(reply, &flipped, &w).map(|r| r.kind),
            Some(RunawayKind::Counter(vec!["/model_3d".into()]))
        );
        let other = call(
            "p",
            json!({"name": "rat hemoglobin", "model_3d": false, "ids": [1]}),
        );
        assert_eq!(runaway(reply, &other, &w), None);
        let longer = call(
            "p",
            json!({"name": "human HbA1c", "model_3d": true, "ids": [1, 2]}),
        );
        assert_eq!(runaway(reply, &longer, &w), None);
        let more = call(
            "p",
            json!({"name": "human HbA1c", "model_3d": true, "ids": [1], "x": 1}),
        );
        assert_eq!(runaway(reply, &more, &w), None);
        assert_eq!(runaway(reply, &call("q", json!({})), &w), None);
    }

    #[test]
    fn numbers_of_earlier_calls_and_tool_results_count_as_written() {
        let history: Vec<ChatMessage> = serde_json::from_value(json!([
            {"role": "user", "content": "page through the results"},
            {"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                "function": {"name": "list", "arguments": "{\"page\": 1}"}}]},
            {"role": "tool", "tool_call_id": "1", "content": "{\"next_page\": 2.5}"}
        ]))
        .expect("messages");
        let w = Written::from_messages(&history);
        let reply = [call("list", json!({"page": 1}))];
        assert_eq!(
            runaway(&reply, &call("list", json!({"page": 2.5})), &w),
            None
        );
        assert!(runaway(&reply, &call("list", json!({"page": 3})), &w).is_some());
    }

    #[test]
    fn the_reason_names_the_call_and_the_pointers() {
        let r = Runaway {
            of: 1,
            kind: RunawayKind::Counter(vec!["/a".into(), "/b/0".into()]),
        };
        assert_eq!(
            r.reason(),
            "call 1 of this reply with only /a, /b/0 changed to values the conversation never gave"
        );
    }
}
