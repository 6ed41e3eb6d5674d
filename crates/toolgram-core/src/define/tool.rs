//! Tool definitions: [`Tool`], the checked pool [`ToolSet`], [`ToolChoice`] and [`ToolCall`].
//!
//! Reading a tool set checks every definition up front (name, shape, JSON Schema validity)
//! and reports the tool and JSON pointer of the first problem. A grammar tool's Lark text is
//! held here as given; this module must not compile grammars or know call syntaxes.

use crate::define::rules::ArgumentRule;
use crate::error::{CompileError, DefinitionError};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// One JSON-Schema function tool.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tool {
    /// Unique name, `[A-Za-z0-9_-]{1,64}`.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// Trigger words of an escape-hatch tool (`"x-toolgram": {"escape_hatch": [...]}` in the
    /// function object): the tool stays out of the pool unless the request says one of them.
    /// Empty for ordinary tools.
    pub escape_hatch: Vec<String>,
    /// A call may repeat an earlier one with the same arguments and still be made
    /// (`"x-toolgram": {"repeatable": true}`: polling, status); other tools' repeats of an
    /// answered call are excluded under the `forbid` repeat policy.
    pub repeatable: bool,
    /// Custom argument rules (`"x-toolgram": {"rules": [...]}`), checked after parsing and
    /// told to the model in the description.
    pub rules: Vec<ArgumentRule>,
    /// For a grammar ("custom") tool: its grammar; `parameters` is then the JSON fallback
    /// shape `{"input": <text in the grammar>}`, and the text is checked against the grammar
    /// after parsing.
    pub grammar: Option<GrammarSpec>,
}

/// The grammar of a grammar tool (Lark, read by core's Lark reader).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GrammarSpec {
    /// The Lark text.
    pub definition: String,
    /// What the tool's executor refuses beyond its grammar, checked after parsing like any
    /// rule (set with [`ToolSet::set_input_check`]).
    pub check: Option<InputCheck>,
    /// The text is left free while decoding, even in grammar mode: the call is decoded as the
    /// JSON fallback (`{"input": "<any text>"}`, that schema enforced) and the text checked
    /// against the grammar after parsing — what a decoder with strict JSON but no grammars
    /// makes of the tool (set with [`ToolSet::set_text_checked_after`]).
    pub checked_after: bool,
}

/// A check of a grammar tool's input text beyond what its grammar can say (a context-free
/// grammar cannot tie a query's columns to the tables it names later), given by whoever
/// runs the tool: `Err` carries the message the model gets back.
#[derive(Clone)]
pub struct InputCheck(std::sync::Arc<CheckFn>);

/// The function behind an [`InputCheck`].
type CheckFn = dyn Fn(&str) -> Result<(), String> + Send + Sync;

impl InputCheck {
    /// Wrap a check.
    pub fn new(check: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(check))
    }

    /// Check `text` (already in the tool's grammar).
    pub fn check(&self, text: &str) -> Result<(), String> {
        (self.0)(text)
    }
}

impl std::fmt::Debug for InputCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InputCheck")
    }
}

impl PartialEq for InputCheck {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Tool {
    /// The description with the custom rules spelled out, which the schema cannot tell the
    /// model.
    pub fn description_for_model(&self) -> String {
        let mut text = self.description.clone();
        for rule in &self.rules {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&rule.describe());
        }
        text
    }

    /// The tool as chat templates take it (`{"type":"function","function":{…}}`, the
    /// convention Hugging Face templates share with OpenAI's Chat API; the API's own tool
    /// items are toolgram-wire's).
    pub fn to_openai(&self) -> Value {
        let mut function = Map::new();
        function.insert("name".into(), Value::String(self.name.clone()));
        let description = self.description_for_model();
        if !description.is_empty() {
            function.insert("description".into(), Value::String(description));
        }
        function.insert("parameters".into(), self.parameters.clone());
        json!({"type": "function", "function": function})
    }
}

/// A checked pool of tools with their argument validators (shared with the pools
/// [`ToolSet::subset`] makes of it: a schema is compiled once).
pub struct ToolSet {
    tools: Vec<Tool>,
    validators: Vec<Arc<jsonschema::Validator>>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.tools)
            .finish()
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl ToolSet {
    /// Check and index already-built tools. Pointers in errors are relative to the tool's
    /// `function` object, prefixed with its index (`/3/function/parameters/...`).
    pub fn new(tools: Vec<Tool>) -> Result<Self, DefinitionError> {
        let mut validators = Vec::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            let at = |p: &str| format!("/{i}/function{p}");
            if !valid_name(&tool.name) {
                return Err(DefinitionError::new(
                    Some(&tool.name),
                    at("/name"),
                    "tool names must be 1 to 64 characters of A-Z, a-z, 0-9, `_` or `-`",
                ));
            }
            if tools[..i].iter().any(|t| t.name == tool.name) {
                return Err(DefinitionError::new(
                    Some(&tool.name),
                    at("/name"),
                    "duplicate tool name",
                ));
            }
            validators.push(Arc::new(check_parameters(tool, &at("/parameters"))?));
        }
        Ok(Self { tools, validators })
    }

    /// A new pool with the tools at `indices` (in that order; an index past the pool is
    /// skipped), sharing their validators: nothing is checked or compiled again. An index given
    /// twice would name a tool twice: refused as a duplicate name.
    pub fn subset(&self, indices: &[usize]) -> Result<Self, DefinitionError> {
        let mut tools = Vec::with_capacity(indices.len());
        let mut validators = Vec::with_capacity(indices.len());
        for (k, &i) in indices.iter().enumerate() {
            let (Some(tool), Some(validator)) = (self.tools.get(i), self.validators.get(i)) else {
                continue;
            };
            if indices[..k].contains(&i) {
                return Err(DefinitionError::new(
                    Some(&tool.name),
                    format!("/{}/function/name", tools.len()),
                    "duplicate tool name",
                ));
            }
            tools.push(tool.clone());
            validators.push(Arc::clone(validator));
        }
        Ok(Self { tools, validators })
    }

    /// The tools, in definition order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Look a tool up by name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Give the grammar tool `name` a check of its input beyond its grammar; false when no
    /// grammar tool has that name.
    pub fn set_input_check(&mut self, name: &str, check: InputCheck) -> bool {
        self.grammar_spec_mut(name)
            .map(|spec| spec.check = Some(check))
            .is_some()
    }

    /// Decode the grammar tool `name` as its JSON fallback (schema enforced, text free) and
    /// check its text against the grammar only after parsing; false when no grammar tool has
    /// that name.
    pub fn set_text_checked_after(&mut self, name: &str) -> bool {
        self.grammar_spec_mut(name)
            .map(|spec| spec.checked_after = true)
            .is_some()
    }

    fn grammar_spec_mut(&mut self, name: &str) -> Option<&mut GrammarSpec> {
        self.tools
            .iter_mut()
            .find(|t| t.name == name)
            .and_then(|t| t.grammar.as_mut())
    }

    /// The argument validator of the tool at `index`.
    pub fn validator(&self, index: usize) -> Option<&jsonschema::Validator> {
        self.validators.get(index).map(|v| &**v)
    }

    /// Index of a tool by name.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|t| t.name == name)
    }

    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The pool as chat templates take it (see [`Tool::to_openai`]).
    pub fn to_openai(&self) -> Value {
        Value::Array(self.tools.iter().map(Tool::to_openai).collect())
    }
}

fn check_parameters(tool: &Tool, at: &str) -> Result<jsonschema::Validator, DefinitionError> {
    let err = |p: &str, m: String| DefinitionError::new(Some(&tool.name), format!("{at}{p}"), m);
    let schema = tool
        .parameters
        .as_object()
        .ok_or_else(|| err("", "`parameters` must be a JSON Schema object".into()))?;
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(err(
                "/type",
                format!("the arguments must be an object, but `type` is {other}"),
            ));
        }
        None => {
            return Err(err(
                "",
                "`parameters` must say `\"type\": \"object\"`".into(),
            ));
        }
    }
    match jsonschema::meta::try_validate(&tool.parameters) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(err(
                &e.instance_path.to_string(),
                format!("invalid JSON Schema: {e}"),
            ));
        }
        Err(e) => {
            return Err(err(
                "/$schema",
                format!(
                    "not a JSON Schema draft toolgram reads (draft-04, -06, -07, 2019-09, 2020-12): {e}"
                ),
            ));
        }
    }
    // A property no value can satisfy is a definition error now, not a grammar error later.
    if let Some((p, message)) =
        toolgram_grammar::schema::contradictions::contradiction(&tool.parameters)
    {
        return Err(err(&p, message));
    }
    // Arguments are validated under the same closed-object policy the grammar applies.
    crate::define::arguments::post_parse_validator(&crate::define::arguments::close_objects(
        &tool.parameters,
    ))
    .map_err(|e| err("", format!("unusable JSON Schema: {e}")))
}

/// Which calls the model may make.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// Text, or calls when the model decides to call.
    #[default]
    Auto,
    /// Text only, never a call.
    None,
    /// At least one call to any tool in the pool.
    Required,
    /// A call to this tool.
    Named(String),
    /// Only these tools may be called; `required` says whether a call must be made.
    AllowedTools {
        /// Names of the allowed tools.
        tools: Vec<String>,
        /// Whether a call is mandatory.
        required: bool,
    },
}

impl ToolChoice {
    /// Read the CLI spelling: `auto`, `none`, `required`, or a tool name.
    pub fn from_cli(s: &str) -> Self {
        match s {
            "auto" => Self::Auto,
            "none" => Self::None,
            "required" | "any" => Self::Required,
            name => Self::Named(name.to_owned()),
        }
    }

    /// Check the choice against the pool and return the indices of callable tools.
    pub fn callable(&self, tools: &ToolSet) -> Result<Vec<usize>, CompileError> {
        let all = || (0..tools.tools().len()).collect::<Vec<_>>();
        let idx = match self {
            Self::None => Vec::new(),
            Self::Auto => all(),
            Self::Required => {
                if tools.is_empty() {
                    return Err(CompileError::EmptyPool("required".into()));
                }
                all()
            }
            Self::Named(n) => vec![
                tools
                    .position(n)
                    .ok_or_else(|| CompileError::UnknownTool(n.clone()))?,
            ],
            Self::AllowedTools {
                tools: names,
                required,
            } => {
                let idx = names
                    .iter()
                    .map(|n| {
                        tools
                            .position(n)
                            .ok_or_else(|| CompileError::UnknownTool(n.clone()))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if *required && idx.is_empty() {
                    return Err(CompileError::EmptyPool("allowed_tools (required)".into()));
                }
                idx
            }
        };
        Ok(idx)
    }

    /// The same choice with a call required: `auto` becomes `required`, `allowed_tools`
    /// required; `none` and the choices that already require one stay as they are.
    pub fn with_call_required(&self) -> Self {
        match self {
            Self::Auto => Self::Required,
            Self::AllowedTools { tools, .. } => Self::AllowedTools {
                tools: tools.clone(),
                required: true,
            },
            other => other.clone(),
        }
    }

    /// Whether the output must contain a call.
    pub fn requires_call(&self) -> bool {
        match self {
            Self::Required | Self::Named(_) => true,
            Self::AllowedTools { required, .. } => *required,
            Self::Auto | Self::None => false,
        }
    }
}

/// A parsed tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// Call id, unique within a response (`call_…`).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> DefinitionError {
        match ToolSet::from_json_str(text) {
            Err(e) => e,
            Ok(t) => panic!("accepted {t:?}"),
        }
    }

    #[test]
    fn a_subset_shares_its_validators_and_refuses_a_tool_twice() {
        let pool = ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}},
                {"type":"function","function":{"name":"b","parameters":{"type":"object",
                 "properties":{"n":{"type":"integer"}}}}}]"#,
        )
        .expect("a pool");
        let kept = pool.subset(&[1, 7]).expect("a subset");
        assert_eq!(kept.tools().len(), 1);
        assert_eq!(kept.tools()[0].name, "b");
        assert!(Arc::ptr_eq(&kept.validators[0], &pool.validators[1]));
        assert!(!kept.validators[0].is_valid(&json!({"n": "x"})));
        let twice = pool.subset(&[0, 0]).expect_err("a tool twice");
        assert!(twice.to_string().contains("duplicate"), "{twice}");
    }

    #[test]
    fn accepts_array_and_wrapped_forms() {
        let one = r#"{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}"#;
        assert_eq!(
            ToolSet::from_json_str(&format!("[{one}]")).map(|t| t.tools().len()),
            Ok(1)
        );
        assert_eq!(
            ToolSet::from_json_str(&format!("{{\"tools\":[{one}]}}")).map(|t| t.tools().len()),
            Ok(1)
        );
    }

    #[test]
    fn bad_schema_reports_tool_and_pointer() {
        let e = err(
            r#"[{"type":"function","function":{"name":"ok","parameters":{"type":"object"}}},
            {"type":"function","function":{"name":"bad","parameters":{"type":"object","properties":{"n":{"type":"integr"}}}}}]"#,
        );
        assert_eq!(e.tool.as_deref(), Some("bad"));
        assert!(
            e.pointer.starts_with("/1/function/parameters/properties/n"),
            "{e}"
        );
    }

    #[test]
    fn duplicate_and_bad_names_are_refused() {
        let e = err(
            r#"[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]"#,
        );
        assert_eq!(
            (e.pointer.as_str(), e.message.as_str()),
            ("/1/function/name", "duplicate tool name")
        );
        let e = err(r#"[{"type":"function","function":{"name":"has space"}}]"#);
        assert_eq!(e.pointer, "/0/function/name");
    }

    #[test]
    fn non_object_parameters_are_refused() {
        let e = err(
            r#"{"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"string"}}}]}"#,
        );
        assert_eq!(e.pointer, "/tools/0/function/parameters/type");
    }

    #[test]
    fn named_choice_must_exist() {
        let t = ToolSet::from_json_str(r#"[{"type":"function","function":{"name":"a"}}]"#)
            .expect("valid");
        assert_eq!(
            ToolChoice::Named("b".into()).callable(&t),
            Err(CompileError::UnknownTool("b".into()))
        );
        assert_eq!(ToolChoice::Named("a".into()).callable(&t), Ok(vec![0]));
    }

    /// A tool set declaring such a property is refused when it is read, at the property.
    #[test]
    fn a_tool_set_with_an_unsatisfiable_property_is_a_definition_error() {
        let doc = json!([{"type": "function", "function": {"name": "buy", "parameters": {
            "type": "object", "required": ["n"],
            "properties": {"n": {"type": "integer", "enum": ["1", "2"]}}}}}]);
        let e = ToolSet::from_value(&doc).expect_err("refused");
        assert_eq!(e.pointer, "/0/function/parameters/properties/n/enum");
        assert!(e.to_string().contains("buy"), "{e}");
    }

    /// A `$schema` naming a meta-schema nobody knows is refused by name, never a panic.
    #[test]
    fn an_unknown_meta_schema_is_a_definition_error() {
        let doc = json!([{"type": "function", "function": {"name": "f", "parameters": {
            "$schema": "http://localhost:1234/draft2020-12/metaschema-no-validation.json",
            "type": "object", "properties": {"n": {"minimum": 10}}}}}]);
        let e = ToolSet::from_value(&doc).expect_err("refused");
        assert_eq!(e.pointer, "/0/function/parameters/$schema");
        assert!(e.to_string().contains("not a JSON Schema draft"), "{e}");
    }
}
