//! Google Gemini `generateContent`, as generativelanguage.googleapis.com speaks it: the model
//! in the URL (never the body), `contents`/`systemInstruction`, function declarations through
//! the gemini profile with calling modes ANY/VALIDATED/NONE, `generationConfig`,
//! `candidates[0].content.parts` back, SSE chunks via `streamGenerateContent` — the shapes
//! toolgram-wire's `gemini` module's. Shapes only: the URL, key and header are the `gemini`
//! row's in the registry.

use crate::dialect::request::{note_fallbacks, profiled, prompt_system};
use crate::error::ProviderError;
use crate::profile::Profile;
use crate::spec::{Body, Dialect, Kind, ReadError, RenderInput};
use serde_json::{Value, json};
use toolgram_core::{ToolCall, ToolChoice, ToolSet};
use toolgram_wire::gemini;

/// Gemini `generateContent`.
#[derive(Debug)]
pub(crate) struct GenerateContent;

impl Dialect for GenerateContent {
    fn profile(&self) -> Profile {
        Profile::Gemini
    }

    fn prompt(&self, input: &RenderInput, pool: &ToolSet) -> Value {
        json!({
            "systemInstruction": gemini::system_instruction(&prompt_system(input, pool)),
            "contents": gemini::contents(input.messages),
        })
    }

    fn strict_tools(&self, input: &RenderInput, pool: &ToolSet, notes: &mut Vec<String>) -> Body {
        strict(input, pool, notes)
    }

    fn finish(&self, input: &RenderInput, body: &mut Value) -> String {
        if let Some(cfg) = gemini::generation_config(input.temperature, input.max_tokens) {
            body["generationConfig"] = cfg;
        }
        let model = input.model.unwrap_or("gemini-2.5-flash");
        if input.stream {
            format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("/v1beta/models/{model}:generateContent")
        }
    }

    fn reply_text(&self, kind: Kind, body: &Value) -> Result<String, ReadError> {
        gemini::read_text(body)
            .ok_or_else(|| ReadError::shape(kind, "no `candidates[0].content.parts`"))
    }

    fn native_calls(&self, body: &Value) -> Result<Vec<ToolCall>, ReadError> {
        Ok(gemini::read_calls(body))
    }

    fn usage(&self, body: &Value) -> (Option<usize>, Option<usize>, Option<usize>) {
        gemini::read_usage(body)
    }

    fn assemble(&self, _kind: Kind, chunks: &[Value]) -> Result<Value, ProviderError> {
        Ok(gemini::assemble(chunks))
    }
}

/// `generateContent` with function declarations; strict = mode ANY / VALIDATED.
fn strict(
    input: &RenderInput,
    pool: &ToolSet,
    notes: &mut Vec<String>,
) -> Result<Value, ProviderError> {
    let system: Vec<String> = input
        .messages
        .iter()
        .filter(|m| m.role == "system")
        .filter_map(|m| m.content.clone())
        .collect();
    let mut body = json!({"contents": gemini::contents(input.messages)});
    if !system.is_empty() {
        body["systemInstruction"] = gemini::system_instruction(&system.join("\n\n"));
    }
    note_fallbacks(input.tools, false, notes);
    let declarations: Vec<Value> = profiled(input.tools, Profile::Gemini, notes)?
        .into_iter()
        .map(|(name, description, parameters)| gemini::declaration(name, description, parameters))
        .collect();
    let names: Vec<String> = pool.tools().iter().map(|t| t.name.clone()).collect();
    let config = gemini::calling_config(&input.shape.choice, names);
    if !input.shape.parallel && input.shape.choice != ToolChoice::None {
        notes.push(
            "gemini has no parallel-calls switch: extra calls in a reply are refused by toolgram"
                .into(),
        );
    }
    body["tools"] = json!([{"functionDeclarations": declarations}]);
    body["toolConfig"] = json!({"functionCallingConfig": config});
    Ok(body)
}
