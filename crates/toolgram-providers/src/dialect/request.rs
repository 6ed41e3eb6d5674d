//! The pieces every dialect's requests are built from: the fields most providers name alike,
//! the prompt path's system text, OpenAI-shaped messages with it in front, each tool's schema
//! in a profile, and the notes for what a provider will not enforce. Schemas go through the
//! provider profiles ([`crate::profile`]), prompt text through core's `prompt`. Pieces only:
//! no whole body is assembled here.

use crate::error::ProviderError;
use crate::profile::{Profile, render_parameters};
use crate::spec::RenderInput;
use serde_json::{Value, json};
use toolgram_core::syntax::prompt::{few_shot, tools_prompt};
use toolgram_core::{ChatMessage, ToolSet};

/// `model`, `temperature`, the token limit under `max_key` and `stream: true` when streaming:
/// the fields most providers name alike, in this order.
pub(crate) fn common_fields(input: &RenderInput, body: &mut Value, max_key: &str) {
    if let (Some(model), Value::Object(map)) = (input.model, &mut *body) {
        map.insert("model".into(), json!(model));
    }
    if let Some(t) = input.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(n) = input.max_tokens {
        body[max_key] = json!(n);
    }
    if input.stream {
        body["stream"] = json!(true);
    }
}

/// The prompt path's system text: the tools and example calls in the model's syntax.
pub(crate) fn prompt_system(input: &RenderInput, pool: &ToolSet) -> String {
    format!(
        "{}\n\n{}",
        tools_prompt(pool, input.syntax),
        few_shot(
            pool,
            &input.shape.choice,
            input.shape.parallel,
            input.syntax,
            &|_| {}
        )
    )
}

/// OpenAI-shaped messages with toolgram's system text in front.
pub(crate) fn with_system(messages: &[ChatMessage], system: &str) -> Vec<Value> {
    let mut out = vec![json!({"role": "system", "content": system})];
    out.extend(
        messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null)),
    );
    out
}

/// Keywords the provider will not enforce, as notes.
pub(crate) fn note_deferred(
    d: &[toolgram_core::define::arguments::DeferredKeyword],
    notes: &mut Vec<String>,
) {
    for k in d {
        notes.push(format!(
            "tool `{}` at {}: `{}` enforced after parsing",
            k.tool, k.pointer, k.keyword
        ));
    }
}

/// Each tool's name, description and parameters in `profile`.
pub(crate) fn profiled(
    pool: &ToolSet,
    profile: Profile,
    notes: &mut Vec<String>,
) -> Result<Vec<(String, String, Value)>, ProviderError> {
    pool.tools()
        .iter()
        .map(|t| {
            let p = render_parameters(&t.name, &t.parameters, profile)?;
            note_deferred(&p.enforced_after_parse, notes);
            Ok((t.name.clone(), t.description_for_model(), p.schema))
        })
        .collect()
}

/// Grammar tools that go out as JSON functions are noted.
pub(crate) fn note_fallbacks(pool: &ToolSet, native: bool, notes: &mut Vec<String>) {
    for t in pool.tools().iter().filter(|t| t.grammar.is_some()) {
        if native {
            notes.push(format!(
                "grammar tool `{}` sent as a freeform custom tool",
                t.name
            ));
        } else {
            notes.push(format!(
                "grammar tool `{}` sent as its JSON fallback ({{\"input\": text}}); the text is checked against its grammar after parsing",
                t.name
            ));
        }
    }
}
