//! BFCL's function documents → OpenAI function tools, as BFCL prepares them for
//! function-calling models: a language hint appended to each description; for Java and
//! JavaScript every parameter becomes a string holding a Java / JavaScript expression (its type
//! said in the description); types mapped with BFCL's `GORILLA_TO_OPENAPI` table (`dict→object`,
//! `float→number`, `tuple→array`, `any→string`, Java/JS types; unknown types → `string`); `.`
//! in names → `_`.
//!
//! One deliberate difference in [`openai_tool`]: BFCL also adds `"format": "float"` to float
//! parameters, and its documents carry an `optional` flag (on a parameter, or a list of names
//! on the parameters object). Both are left out there (the description still says "This is a
//! float type value."; `required` says the same as `optional` in JSON Schema), so the prompts
//! of the stored eval runs stay the same. [`openai_tool_as_bfcl_sends`] keeps both, as BFCL's
//! handler sends them; toolgram takes them as annotations, never refused.
//!
//! This module must not read files or score.

use super::Language;
use serde_json::{Map, Value, json};
use toolgram_core::syntax::pyjson;

/// The OpenAI tool name of a BFCL function name (`math.factorial` → `math_factorial`).
pub fn tool_name(name: &str) -> String {
    name.replace('.', "_")
}

/// BFCL's `GORILLA_TO_OPENAPI` type table.
pub fn openapi_type(t: &str) -> Option<&'static str> {
    Some(match t {
        "integer" | "byte" | "short" | "long" | "Bigint" => "integer",
        "number" | "float" | "double" => "number",
        "string" | "any" | "char" | "Any" | "String" => "string",
        "boolean" | "bool" => "boolean",
        "array" | "list" | "tuple" | "ArrayList" | "Array" | "Queue" | "Stack" => "array",
        "dict" | "object" | "HashMap" | "Hashtable" => "object",
        _ => return None,
    })
}

fn hint(language: Language) -> &'static str {
    match language {
        Language::Python => " Note that the provided function is in Python 3 syntax.",
        Language::Java => " Note that the provided function is in Java 8 SDK syntax.",
        Language::JavaScript => " Note that the provided function is in JavaScript syntax.",
    }
}

fn append(map: &mut Map<String, Value>, key: &str, text: &str) {
    let old = map.get(key).and_then(Value::as_str).unwrap_or_default();
    let new = format!("{old}{text}");
    map.insert(key.to_owned(), json!(new));
}

/// Java and JavaScript parameters as strings holding expressions (BFCL's
/// `func_doc_language_specific_pre_processing`).
fn as_expression(p: &mut Map<String, Value>, language: Language) {
    let lang = if language == Language::Java {
        "Java"
    } else {
        "JavaScript"
    };
    let t = p
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if t == "any" {
        append(
            p,
            "description",
            &format!(
                " This parameter can be of any type of {lang} object in string representation."
            ),
        );
    } else {
        append(
            p,
            "description",
            &format!(" This is {lang} {t} type parameter in string representation."),
        );
    }
    let listy = match language {
        Language::Java => t == "ArrayList" || t == "Array",
        _ => t == "array",
    };
    if listy {
        let inner = p["items"]["type"].as_str().unwrap_or_default().to_owned();
        append(
            p,
            "description",
            &format!(
                " The list elements are of type {inner}; they are not in string representation."
            ),
        );
        p.remove("items");
    }
    if language == Language::JavaScript
        && t == "dict"
        && let Some(props) = p.remove("properties")
    {
        append(
            p,
            "description",
            &format!(
                " The dictionary entries have the following schema; they are not in string representation. {}",
                pyjson::to_string(&props, None)
            ),
        );
    }
    p.insert("type".into(), json!("string"));
}

/// BFCL's `_cast_to_openai_type` on a `properties` map (`exact`: with its `format: float`
/// and the documents' `optional` flags).
fn cast(properties: &mut Map<String, Value>, exact: bool) {
    for p in properties.values_mut() {
        let Value::Object(p) = p else { continue };
        if !exact {
            p.remove("optional");
        }
        let t = p.get("type").and_then(Value::as_str).map(str::to_owned);
        if t.as_deref() == Some("float") {
            if exact {
                p.insert("format".into(), json!("float"));
            }
            append(p, "description", " This is a float type value.");
        }
        let mapped = t.as_deref().and_then(openapi_type).unwrap_or("string");
        p.insert("type".into(), json!(mapped));
        if mapped != "array" && mapped != "object" {
            continue;
        }
        if let Some(Value::Object(inner)) = p.get_mut("properties") {
            cast(inner, exact);
        } else if let Some(Value::Object(items)) = p.get_mut("items") {
            let it = items.get("type").and_then(Value::as_str).map(str::to_owned);
            if let Some(it) = it {
                items.insert("type".into(), json!(openapi_type(&it).unwrap_or("string")));
            }
            match items.get("type").and_then(Value::as_str) {
                Some("array") => {
                    if let Some(Value::Object(ii)) = items.get_mut("items") {
                        let t = ii.get("type").and_then(Value::as_str).map(str::to_owned);
                        if let Some(t) = t {
                            ii.insert("type".into(), json!(openapi_type(&t).unwrap_or("string")));
                        }
                    }
                }
                Some("object") => {
                    if let Some(Value::Object(props)) = items.get_mut("properties") {
                        cast(props, exact);
                    }
                }
                _ => {}
            }
        }
    }
}

/// One BFCL function → one OpenAI function tool, without BFCL's `format: float` and
/// `optional` (see the module's doc).
pub fn openai_tool(function: &Value, language: Language) -> Result<Value, String> {
    convert(function, language, false)
}

/// One BFCL function → the OpenAI function tool BFCL's handler sends, `format: float` and
/// `optional` flags included.
pub fn openai_tool_as_bfcl_sends(function: &Value, language: Language) -> Result<Value, String> {
    convert(function, language, true)
}

fn convert(function: &Value, language: Language, exact: bool) -> Result<Value, String> {
    let mut f = function
        .as_object()
        .cloned()
        .ok_or("a function is not an object")?;
    let name = f
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a function has no name")?
        .to_owned();
    append(&mut f, "description", hint(language));
    let mut params = match f.remove("parameters") {
        Some(Value::Object(p)) => p,
        None => Map::new(),
        Some(_) => return Err(format!("{name}: `parameters` is not an object")),
    };
    params.insert("type".into(), json!("object"));
    if !exact {
        params.remove("optional");
    }
    if let Some(Value::Object(props)) = params.get_mut("properties") {
        if language != Language::Python {
            for p in props.values_mut() {
                if let Value::Object(p) = p {
                    as_expression(p, language);
                }
            }
        }
        cast(props, exact);
    }
    Ok(json!({"type": "function", "function": {
        "name": tool_name(&name),
        "description": f.get("description").cloned().unwrap_or(json!("")),
        "parameters": params,
    }}))
}
