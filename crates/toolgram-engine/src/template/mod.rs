//! Render a conversation into the model's prompt with its own Jinja chat template
//! (`minijinja`), tools passed in the way the template expects.
//!
//! Templates that know tools (Qwen's `# Tools` block) receive the OpenAI `tools` array;
//! templates without tool syntax get the tools described in the system prompt; earlier calls
//! go as they are to templates that render a tools list or `tool_calls`, and to the others as
//! text in the syntax the engine compiles. The environment follows Hugging Face's:
//! `trim_blocks`, `lstrip_blocks`, its `{% generation %}` block (renders its body
//! unchanged), Jinja2's `tojson` and `indent` and a real `strftime_now`
//! (`template_filters.rs`), lists in a
//! `namespace` that can be appended to (`template_lists.rs`). `datetime` (today's date;
//! llama.cpp adds the time, which would change the prompt every second) and `functions` (the
//! tools as indented JSON) are given to FireFunction's template as llama.cpp gives them. Call
//! arguments go as an object (templates `tojson` them), or as their JSON text where the
//! template adds them to a string and so fails on an object (R1-Distill-Llama, functionary
//! v3.2). This module must not tokenize or decode.

mod filters;
mod lists;

use crate::client_text::ClientText;
use minijinja::value::Value as JValue;
use minijinja::{Environment, Error as JError, ErrorKind};
use serde_json::{Value, json};
use std::borrow::Cow;
use toolgram_core::syntax::CallSyntax;
use toolgram_core::syntax::pyjson;
use toolgram_core::template::{self, Detection, Rendered, TemplateRenderer};
use toolgram_core::{ChatMessage, ToolCall, ToolSet};

/// A compiled chat template plus what it knows about tools.
pub struct ChatTemplate {
    env: Environment<'static>,
    /// Whether the template renders a `tools` list itself.
    pub renders_tools: bool,
    /// Whether the template writes an assistant message's `tool_calls` itself (some write
    /// calls natively but describe no tools: DeepSeek V3.1).
    pub renders_calls: bool,
    /// Whether the template may read a `functions` variable (FireFunction).
    reads_functions: bool,
    bos: String,
    eos: String,
}

const TEMPLATE_NAME: &str = "chat";

impl ChatTemplate {
    /// Compile `source`; `bos`/`eos` are the model's special token texts.
    pub fn new(source: &str, bos: &str, eos: &str) -> Result<Self, String> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", filters::tojson);
        env.add_filter("indent", filters::indent);
        env.add_function("raise_exception", |msg: String| -> Result<JValue, JError> {
            Err(JError::new(ErrorKind::InvalidOperation, msg))
        });
        env.add_function("strftime_now", filters::strftime_now);
        env.add_function("namespace", lists::namespace);
        env.add_template_owned(TEMPLATE_NAME, without_generation_tags(source))
            .map_err(|e| format!("chat template does not compile: {e:#}"))?;
        Ok(Self {
            env,
            renders_tools: source.contains("tools"),
            renders_calls: source.contains("tool_calls"),
            reads_functions: source.contains("functions"),
            bos: bos.to_owned(),
            eos: eos.to_owned(),
        })
    }

    /// Render the prompt for `messages`, ending with the assistant turn's opening.
    pub fn render(
        &self,
        messages: &[ChatMessage],
        tools: &ToolSet,
        syntax: &CallSyntax,
    ) -> Result<String, String> {
        self.render_with(messages, tools, syntax, true)
    }

    /// Render `messages`, with the assistant turn's opening at the end or not (a
    /// conversation that ends with the assistant's own message, as the template writes it).
    pub fn render_with(
        &self,
        messages: &[ChatMessage],
        tools: &ToolSet,
        syntax: &CallSyntax,
        add_generation_prompt: bool,
    ) -> Result<String, String> {
        self.render_inner(messages, tools, syntax, add_generation_prompt, None)
    }

    /// The prompt for `messages`, whose client text `client` already escaped (see
    /// `client_text`), with the tools' definitions escaped here: what the engine tokenizes.
    pub(crate) fn render_escaped(
        &self,
        messages: &[ChatMessage],
        tools: &ToolSet,
        syntax: &CallSyntax,
        client: &ClientText,
    ) -> Result<String, String> {
        self.render_inner(messages, tools, syntax, true, Some(client))
    }

    fn render_inner(
        &self,
        messages: &[ChatMessage],
        tools: &ToolSet,
        syntax: &CallSyntax,
        add_generation_prompt: bool,
        client: Option<&ClientText>,
    ) -> Result<String, String> {
        let render = |args| {
            self.render_args_as(messages, tools, syntax, add_generation_prompt, args, client)
                .map_err(|e| {
                    let adds_an_object = e.kind() == ErrorKind::InvalidOperation
                        && e.detail()
                            .is_some_and(|d| d.contains("+ operator") && d.contains("map"));
                    (
                        format!("chat template failed to render: {e:#}"),
                        adds_an_object,
                    )
                })
        };
        match render(Args::Object) {
            Err((e, true)) if messages.iter().any(|m| m.tool_calls.is_some()) => {
                tracing::debug!("the template adds call arguments to a string: given as JSON text");
                render(Args::Text).map_err(|_| e)
            }
            rendered => rendered.map_err(|(e, _)| e),
        }
    }

    fn render_args_as(
        &self,
        messages: &[ChatMessage],
        tools: &ToolSet,
        syntax: &CallSyntax,
        add_generation_prompt: bool,
        args: Args,
        client: Option<&ClientText>,
    ) -> Result<String, JError> {
        let native = self.renders_tools && !tools.is_empty();
        let native_calls = native || self.renders_calls;
        let mut msgs: Vec<Value> = messages
            .iter()
            .map(|m| message_json(m, syntax, native_calls, args))
            .collect();
        if !native && !tools.is_empty() {
            let mut block = toolgram_core::syntax::prompt::tools_prompt(tools, syntax);
            if let Some(c) = client {
                // The definitions' JSON (one line) comes before the first blank line; toolgram's
                // example call after it keeps its markers.
                let cut = block.find("\n\n").unwrap_or(block.len());
                if let Cow::Owned(head) = c.escape(&block[..cut], false) {
                    block = format!("{head}{}", &block[cut..]);
                }
            }
            match msgs.first_mut() {
                Some(first) if first["role"] == "system" => {
                    let text = first["content"].as_str().unwrap_or_default().to_owned();
                    first["content"] =
                        Value::String(format!("{text}\n\n{block}").trim_start().to_owned());
                }
                _ => msgs.insert(0, json!({"role": "system", "content": block})),
            }
        }
        let mut openai = tools.to_openai();
        if let Some(c) = client {
            c.escape_value(&mut openai, false);
        }
        // FireFunction's template prints the tools itself from `functions`, as llama.cpp
        // gives it (the array, indented by 2).
        let functions = if tools.is_empty() || !self.reads_functions {
            String::new()
        } else {
            pyjson::to_string(&openai, Some(2))
        };
        let tools_value = if native { openai } else { Value::Null };
        let ctx = json!({
            "messages": msgs,
            "tools": tools_value,
            "add_generation_prompt": add_generation_prompt,
            "bos_token": self.bos,
            "eos_token": self.eos,
            "datetime": today(),
            "functions": functions,
        });
        self.env.get_template(TEMPLATE_NAME)?.render(ctx)
    }
}

/// How a native call's arguments reach the template.
#[derive(Debug, Clone, Copy)]
enum Args {
    /// The arguments object (templates `tojson` it).
    Object,
    /// Its JSON text as `json.dumps` writes it (templates that add it to a string).
    Text,
}

/// Today's date in UTC, `Nov 25 2026` (day resolution keeps a prompt, and so the prefix
/// cache, the same all day).
fn today() -> String {
    filters::strftime("%b %d %Y", time::OffsetDateTime::now_utc())
}

fn message_json(m: &ChatMessage, syntax: &CallSyntax, native: bool, as_: Args) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    let Some(calls) = m.tool_calls.as_ref().filter(|c| !c.is_empty()) else {
        // No calls (`tool_calls` absent or `[]`) and no text (`content` null or absent): an
        // empty text, as OpenAI writes it. Templates add a message's content to a string
        // (Qwen2.5's `'\n' + message.content`), which fails on none; llama.cpp's chat
        // templates polyfill null content with "" the same way. BFCL's multi-turn handler
        // sends such a message back after a reply it could not decode.
        if m.content.is_none() {
            v["content"] = Value::String(String::new());
        }
        if let Value::Object(o) = &mut v {
            o.shift_remove("tool_calls");
        }
        return v;
    };
    if native {
        // Templates apply `tojson` to arguments: give them the object, not the JSON string.
        let parsed: Vec<Value> = calls
            .iter()
            .map(|c| {
                let args = match (serde_json::from_str::<Value>(&c.function.arguments), as_) {
                    (Ok(v), Args::Object) => v,
                    (Ok(v), Args::Text) => Value::String(pyjson::to_string(&v, None)),
                    (Err(_), _) => Value::String(c.function.arguments.clone()),
                };
                json!({"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": args}})
            })
            .collect();
        v["tool_calls"] = Value::Array(parsed);
        if m.content.is_none() {
            // `content: null` stays a key holding none, as llama.cpp passes it: templates
            // that write calls only when `message['content'] is none` (R1-Distill-Llama)
            // see an absent key as undefined, which is not none.
            v["content"] = Value::Null;
        }
    } else {
        let typed: Vec<ToolCall> = calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone(),
                name: c.function.name.clone(),
                arguments: serde_json::from_str(&c.function.arguments)
                    .unwrap_or(Value::String(c.function.arguments.clone())),
            })
            .collect();
        let text = m.content.clone().unwrap_or_default();
        let sep = if text.is_empty() { "" } else { "\n" };
        v["content"] = Value::String(format!("{text}{sep}{}", syntax.render_calls(&typed)));
        if let Value::Object(o) = &mut v {
            o.shift_remove("tool_calls");
        }
    }
    v
}

/// Hugging Face's `{% generation %}…{% endgeneration %}` (it marks the assistant's tokens for
/// training masks and renders its body unchanged) as `{% if true %}…{% endif %}`, which
/// minijinja knows; whitespace control (`-`, `+`) is kept.
fn without_generation_tags(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(i) = rest.find("{%") {
        let (before, tag) = rest.split_at(i);
        out.push_str(before);
        // `tag` opens with `{%`; its end is searched after that (`{%}` must not end itself).
        let Some(end) = tag[2..].find("%}").map(|e| e + 2) else {
            out.push_str(tag);
            return out;
        };
        let inner = &tag[2..end];
        let word = inner.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        let with = match word {
            "generation" => Some("if true"),
            "endgeneration" => Some("endif"),
            _ => None,
        };
        match with {
            Some(w) => out.push_str(&format!("{{%{}%}}", inner.replacen(word, w, 1))),
            None => out.push_str(&tag[..end + 2]),
        }
        rest = &tag[end + 2..];
    }
    out.push_str(rest);
    out
}

impl TemplateRenderer for ChatTemplate {
    fn renders_tools(&self) -> bool {
        self.renders_tools
    }

    fn renders_calls(&self) -> bool {
        self.renders_calls
    }

    fn render_turns(&self, messages: &[ChatMessage], tools: &ToolSet, open: bool) -> Rendered {
        self.render_with(messages, tools, toolgram_core::syntax::detect(""), open)
    }
}

/// The call syntax of a template known only by its source (no model: no BOS or EOS text), as
/// `toolgram parse --template` finds it (core's [`template::detect`]); a template that does
/// not compile is read for its markers alone (said, and notable).
pub fn detect_source(source: &str) -> Detection {
    match ChatTemplate::new(source, "", "") {
        Ok(t) => template::detect(&t, source),
        Err(e) => {
            let s = toolgram_core::syntax::detect(source);
            Detection {
                syntax: s,
                how: format!(
                    "the chat template does not compile ({e}); `{}` from its text",
                    s.name
                ),
                notable: true,
                refused: false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgram_core::syntax::by_name;

    #[test]
    fn generation_blocks_render_their_body() {
        let src = "{%- for m in messages -%}{%- generation -%}[{{ m.content }}]{%- endgeneration -%}\n{%- endfor -%}";
        assert_eq!(
            without_generation_tags(src),
            "{%- for m in messages -%}{%- if true -%}[{{ m.content }}]{%- endif -%}\n{%- endfor -%}"
        );
        assert_eq!(without_generation_tags("a {% x %"), "a {% x %");
        assert_eq!(without_generation_tags("a {%} b"), "a {%} b");
        assert_eq!(
            without_generation_tags("{%}"),
            "{%}",
            "not a tag, and no panic"
        );
        let t = ChatTemplate::new(src, "", "").expect("compiles");
        let msgs: Vec<ChatMessage> =
            serde_json::from_value(json!([{"role": "user", "content": "hi"}])).expect("messages");
        let out = t
            .render(
                &msgs,
                &ToolSet::new(Vec::new()).expect("an empty pool"),
                by_name("hermes").expect("registered"),
            )
            .expect("renders");
        assert_eq!(out, "[hi]");
    }

    const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

    fn tools() -> ToolSet {
        ToolSet::from_json_str(r#"[{"type":"function","function":{"name":"f","description":"does f","parameters":{"type":"object"}}}]"#).expect("valid")
    }

    #[test]
    fn template_without_tools_gets_a_system_block() {
        let t = ChatTemplate::new(CHATML, "", "<|im_end|>").expect("compiles");
        let out = t
            .render(
                &[ChatMessage::text("user", "hi")],
                &tools(),
                by_name("generic-json").expect("registered"),
            )
            .expect("renders");
        assert!(out.starts_with("<|im_start|>system\nYou can call these tools:\n[{\"name\": \"f\", \"description\": \"does f\""), "{out}");
        assert!(
            out.ends_with("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"),
            "{out}"
        );
    }

    /// An assistant message with neither text nor calls (`content` null or absent,
    /// `tool_calls` absent or `[]`) renders as an empty text under a template that adds
    /// content to a string, as Qwen2.5's does; before, the whole request was a 400.
    #[test]
    fn an_assistant_message_with_no_text_and_no_calls_is_an_empty_text() {
        let t = ChatTemplate::new(
            "{% for m in messages %}{{ '<' + m.role + '>' + m.content }}{% if not m.tool_calls %}.{% endif %}{% endfor %}",
            "",
            "",
        )
        .expect("compiles");
        let pool = ToolSet::new(Vec::new()).expect("an empty pool");
        for assistant in [
            json!({"role": "assistant", "content": null}),
            json!({"role": "assistant"}),
            json!({"role": "assistant", "content": null, "tool_calls": []}),
        ] {
            let msgs: Vec<ChatMessage> =
                serde_json::from_value(json!([{"role": "user", "content": "hi"}, assistant]))
                    .expect("messages");
            let out = t
                .render(&msgs, &pool, by_name("hermes").expect("registered"))
                .unwrap_or_else(|e| panic!("{assistant}: {e}"));
            assert_eq!(out, "<user>hi.<assistant>.", "{assistant}");
        }
    }

    fn one_call() -> Vec<ChatMessage> {
        serde_json::from_str(
            r#"[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}]"#,
        )
        .expect("valid")
    }

    #[test]
    fn arguments_added_to_a_string_go_as_json_text() {
        let t = ChatTemplate::new(
            "{% for m in messages if m.tool_calls %}{{ '>>>' + m.tool_calls[0].function.name + '\\n' + m.tool_calls[0].function.arguments }}{% endfor %}",
            "",
            "",
        )
        .expect("compiles");
        let hermes = by_name("hermes").expect("registered");
        let out = t.render_with(&one_call(), &tools(), hermes, false);
        assert_eq!(out.as_deref(), Ok(">>>f\n{\"a\": 1}"));
    }

    #[test]
    fn other_render_errors_are_not_retried_with_json_text() {
        // Fails on the object for another reason, and would render from the text.
        let t = ChatTemplate::new(
            "{% for m in messages if m.tool_calls %}{% if m.tool_calls[0].function.arguments is mapping %}\
             {{ raise_exception('objects refused') }}{% else %}text{% endif %}{% endfor %}",
            "",
            "",
        )
        .expect("compiles");
        let hermes = by_name("hermes").expect("registered");
        let err = t
            .render_with(&one_call(), &tools(), hermes, false)
            .expect_err("the error stands");
        assert!(err.contains("objects refused"), "{err}");
    }

    #[test]
    fn earlier_calls_are_spelled_in_the_syntax() {
        let t = ChatTemplate::new(CHATML, "", "").expect("compiles");
        let msgs: Vec<ChatMessage> = serde_json::from_str(
            r#"[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}]"#,
        )
        .expect("valid");
        let out = t
            .render(
                &msgs,
                &tools(),
                by_name("generic-json").expect("registered"),
            )
            .expect("renders");
        assert!(
            out.contains(
                "<|im_start|>assistant\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}<|im_end|>"
            ),
            "{out}"
        );
    }

    #[test]
    fn tojson_is_python_style_and_unescaped() {
        let t = ChatTemplate::new("{{ tools | tojson }}", "", "").expect("compiles");
        let out = t
            .render(&[], &tools(), by_name("hermes").expect("registered"))
            .expect("renders");
        assert_eq!(
            out,
            r#"[{"type": "function", "function": {"name": "f", "description": "does f", "parameters": {"type": "object"}}}]"#
        );
    }
}
