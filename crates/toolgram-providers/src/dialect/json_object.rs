//! Strict JSON by a response schema (llama-server's `json_schema`, Ollama's `format`): the
//! reply is one JSON object, `{"call": {"name": …, "arguments": {…}}}` or `{"calls": […]}`,
//! matching the call union. The request's messages and schema, and the reply read into calls.
//! Shapes only: it must not name a provider or choose the field the schema goes in.

use crate::dialect::request::{note_deferred, with_system};
use crate::error::ProviderError;
use crate::profile::{Profile, call_union_schema, restore_arguments};
use crate::spec::{ReadError, RenderInput};
use serde_json::Value;
use toolgram_core::ToolSet;
use toolgram_core::syntax::prompt::tools_prompt;
use toolgram_retry::ModelReply;
use toolgram_wire::read::call;

/// The messages (the tools and the reply's shape in a system message) and the call-union
/// schema the reply must match.
pub(crate) fn request(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<(Vec<Value>, Value), ProviderError> {
    let union = call_union_schema(pool, input.shape.parallel, Profile::OpenAiStrict)?;
    note_deferred(&union.enforced_after_parse, notes);
    let shape = if input.shape.parallel {
        r#"{"calls": [{"name": …, "arguments": {…}}, …]}"#
    } else {
        r#"{"call": {"name": …, "arguments": {…}}}"#
    };
    let system = format!(
        "{}\n\nReply with one JSON object: {shape}",
        tools_prompt(pool, input.syntax)
    );
    Ok((with_system(input.messages, &system), union.schema))
}

/// The reply text read as `{"call": …}` or `{"calls": […]}`.
pub(crate) fn read(text: &str, tools: &ToolSet) -> Result<ModelReply, ReadError> {
    let unreadable = |m: String| ReadError::Unreadable {
        raw: text.to_owned(),
        message: m,
    };
    let v: Value = serde_json::from_str(text).map_err(|e| unreadable(format!("not JSON: {e}")))?;
    let list: Vec<&Value> = match (v.get("call"), v.get("calls").and_then(Value::as_array)) {
        (Some(c), _) => vec![c],
        (None, Some(cs)) => cs.iter().collect(),
        _ => {
            return Err(unreadable(
                "expected {\"call\": …} or {\"calls\": […]}".into(),
            ));
        }
    };
    let calls = list
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            let args = c.get("arguments").cloned().unwrap_or(Value::Null);
            let args = tools.get(name).map_or(args.clone(), |t| {
                restore_arguments(Profile::OpenAiStrict, &t.parameters, args)
            });
            call("", i, name, args)
        })
        .collect();
    Ok(ModelReply {
        tool_calls: calls,
        raw: text.to_owned(),
        ..ModelReply::default()
    })
}
