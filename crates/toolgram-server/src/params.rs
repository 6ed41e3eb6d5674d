//! Reading request bodies field by field, so a wrong type or value is a 400 naming the
//! field, never a 5xx and never a silently ignored setting. Shared by the Chat Completions and
//! Responses routes. This module must not run anything.

use crate::app::HostedTools;
use crate::app::Served;
use crate::clip::cut;
use crate::error::ApiError;
use serde_json::{Map, Value};
use std::collections::HashMap;
use toolgram_core::define::request::{Plan, Think};
use toolgram_core::{DefinitionError, Tool, ToolSet};
use toolgram_runtime::{FilteredTool, Request, ResponseFormat, RetryPolicy, RunError, Sampling};
use toolgram_wire::chat;

/// What the server did not do as asked, said in the reply (`toolgram.notes`) and the log.
pub type Notes = Vec<String>;

/// The most unknown fields [`ignored_fields`] names one by one; the rest are counted.
pub const MAX_IGNORED_NOTES: usize = 16;

/// The longest field name a note repeats; longer ones are cut (their length said).
pub const MAX_NOTED_NAME: usize = 64;

/// toolgram's own fields, the same on every API and read by one reader
/// ([`toolgram_fields`], and [`sampling`] for the two biases): never ignored.
pub const TOOLGRAM_FIELDS: &[&str] = &[
    "max_attempts",
    "plan",
    "call_bias",
    "count_bias",
    "votes",
    "repeats",
    "repeated_text",
    "strict_schemas",
];

/// A note for each top-level field of `o` that is neither toolgram's own
/// ([`TOOLGRAM_FIELDS`]) nor in the API's `honoured` or `accepted` (fields clients send whose
/// absence changes nothing here, such as `store` or `user`): at most [`MAX_IGNORED_NOTES`],
/// each name cut to [`MAX_NOTED_NAME`] bytes, and one note counting the rest.
pub fn ignored_fields(o: &Map<String, Value>, honoured: &[&str], accepted: &[&str]) -> Notes {
    let ignored: Vec<&String> = o
        .keys()
        .filter(|k| {
            let k = k.as_str();
            !TOOLGRAM_FIELDS.contains(&k) && !honoured.contains(&k) && !accepted.contains(&k)
        })
        .collect();
    let mut notes: Notes = ignored
        .iter()
        .take(MAX_IGNORED_NOTES)
        .map(|k| {
            let name = cut(k, MAX_NOTED_NAME);
            format!("field `{name}` is not used by this server and was ignored")
        })
        .collect();
    if ignored.len() > MAX_IGNORED_NOTES {
        notes.push(format!(
            "{} more fields are not used by this server and were ignored",
            ignored.len() - MAX_IGNORED_NOTES
        ));
    }
    notes
}

/// The body as an object.
pub fn object(body: &Value) -> Result<&Map<String, Value>, ApiError> {
    body.as_object()
        .ok_or_else(|| ApiError::invalid("", "the request body must be a JSON object"))
}

/// The `plan` field: `true` (= `"on"`), `false` (= `"off"`), or `"on"`, `"off"`, `"count"`.
pub fn opt_plan(o: &Map<String, Value>) -> Result<Option<Plan>, ApiError> {
    let plan = match o.get("plan") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Bool(true)) => Some(Plan::Calls),
        Some(Value::Bool(false)) => Some(Plan::Off),
        Some(Value::String(name)) => Plan::from_name(name),
        Some(_) => None,
    };
    plan.map(Some).ok_or_else(|| {
        ApiError::invalid(
            "plan",
            "`plan` must be true, false, \"on\", \"off\" or \"count\"".to_owned(),
        )
    })
}

/// An optional boolean.
pub fn opt_bool(o: &Map<String, Value>, key: &str) -> Result<Option<bool>, ApiError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ApiError::invalid(key, format!("`{key}` must be a boolean"))),
    }
}

/// An optional number within `[lo, hi]`.
pub fn opt_number(
    o: &Map<String, Value>,
    key: &str,
    lo: f64,
    hi: f64,
) -> Result<Option<f64>, ApiError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
            Some(n) => Err(ApiError::invalid(
                key,
                format!("`{key}` must be between {lo} and {hi}, got {n}"),
            )),
            None => Err(ApiError::invalid(key, format!("`{key}` must be a number"))),
        },
    }
}

/// An optional non-negative integer.
pub fn opt_uint(o: &Map<String, Value>, key: &str) -> Result<Option<u64>, ApiError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            ApiError::invalid(key, format!("`{key}` must be a non-negative integer"))
        }),
    }
}

/// An optional string.
pub fn opt_str<'a>(o: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ApiError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::invalid(key, format!("`{key}` must be a string"))),
    }
}

/// `votes`: ballots from 1 to the server's `--max-votes` (default: the server's `--votes`);
/// more is a 400 naming the bound (the ballots of one request are admitted together, so the
/// operator bounds what one request may take of the queue).
fn votes(o: &Map<String, Value>, limits: &crate::app::ServerConfig) -> Result<usize, ApiError> {
    let max = limits.max_votes;
    match opt_uint(o, "votes")? {
        None => Ok(limits.votes),
        Some(n) if (1..=max as u64).contains(&n) => Ok(n as usize),
        Some(_) => Err(ApiError::invalid(
            "votes",
            format!("`votes` must be from 1 to {max} (this server's --max-votes)"),
        )),
    }
}

pub use crate::app::DEFAULT_MAX_TOKENS;

/// What a request asks that only its model can settle, read before the model is loaded
/// (so a request that cannot be read loads nothing) and applied to the request once it is
/// ([`ModelAsks::apply`]).
#[derive(Debug, Clone, Default)]
pub struct ModelAsks {
    /// The token limit the client named: its field and value (capped to the model's limit).
    pub max_tokens: Option<(&'static str, usize)>,
    /// The reasoning block asked for and the field that asked (`reasoning`, `thinking`):
    /// kept where the model's template writes one, else off with a note.
    pub think: Option<(&'static str, Think)>,
    /// The reasoning budget asked for (Anthropic's `thinking.budget_tokens`).
    pub think_budget: Option<usize>,
    /// The request turned the plan on itself (its `plan` field): its line is returned as
    /// reasoning, as it is to a client that asks for reasoning.
    pub plan_asked: bool,
}

impl ModelAsks {
    /// Settle `req` on the model it runs on: its token limit within the model's (the server's
    /// `--max-tokens`, or the context; a named limit above it capped with a note, none named
    /// [`DEFAULT_MAX_TOKENS`] at most), the reasoning block where the template has one.
    pub fn apply(&self, served: &Served, req: &mut Request, notes: &mut Notes) {
        let limit = served.max_tokens;
        req.sampling.max_tokens = match self.max_tokens {
            Some((key, n)) => {
                if n > limit {
                    notes.push(format!(
                        "`{key}` {n} is above this server's limit: capped to {limit} (toolgram serve --max-tokens; by default the model's context)"
                    ));
                }
                n.min(limit)
            }
            None => limit.min(DEFAULT_MAX_TOKENS),
        };
        req.shape.think = match self.think {
            None => Think::Off,
            Some((_, think)) if served.runtime.reasons() => think,
            Some((field, _)) => {
                notes.push(format!(
                    "`{field}` was ignored: the model's chat template has no reasoning block"
                ));
                Think::Off
            }
        };
        req.show_plan = self.plan_asked || self.think.is_some();
        let max = req.sampling.max_tokens;
        req.sampling.think_budget = self
            .think_budget
            .filter(|_| req.shape.think != Think::Off)
            .map(|b| b.min(max.saturating_sub(1)).max(1));
    }
}

/// Sampling settings common to every API; `max_keys` are the token-limit names in order of
/// preference, the one given recorded in `asks` (the model's limit is applied once it is
/// loaded: [`ModelAsks::apply`]).
pub fn sampling(
    o: &Map<String, Value>,
    max_keys: &[&'static str],
    limits: &crate::app::ServerConfig,
    asks: &mut ModelAsks,
) -> Result<Sampling, ApiError> {
    let mut s = Sampling {
        max_tokens: DEFAULT_MAX_TOKENS,
        call_bias: opt_number(o, "call_bias", -100.0, 100.0)?
            .map(|b| b as f32)
            .or(limits.call_bias),
        count_bias: opt_number(o, "count_bias", -100.0, 100.0)?
            .map(|b| b as f32)
            .or(limits.count_bias),
        ..Sampling::default()
    };
    for key in max_keys {
        if let Some(n) = opt_uint(o, key)? {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            if n == 0 {
                return Err(ApiError::invalid(
                    key,
                    format!("`{key}` must be at least 1"),
                ));
            }
            asks.max_tokens = Some((key, n));
            s.max_tokens = n;
            break;
        }
    }
    // Greedy unless asked otherwise: tool calls are the point, not variety.
    if let Some(t) = opt_number(o, "temperature", 0.0, 2.0)? {
        s.temperature = t as f32;
    }
    if let Some(p) = opt_number(o, "top_p", 0.0, 1.0)? {
        s.top_p = p as f32;
    }
    if let Some(seed) = o.get("seed").filter(|v| !v.is_null()) {
        let n = seed
            .as_i64()
            .ok_or_else(|| ApiError::invalid("seed", "`seed` must be an integer"))?;
        s.seed = Some(n as u64);
    }
    s.stop = stop(o)?;
    s.logit_bias = logit_bias(o)?;
    Ok(s)
}

/// Most stop sequences (OpenAI's limit).
pub const MAX_STOP: usize = 4;

/// Longest stop sequence, in bytes: each is looked for after every generated token.
pub const MAX_STOP_BYTES: usize = 1024;

/// Most `logit_bias` entries (OpenAI's limit).
pub const MAX_LOGIT_BIAS: usize = 300;

/// `stop`: a string or an array of strings, within [`bounded_stop`]'s limits.
fn stop(o: &Map<String, Value>) -> Result<Vec<String>, ApiError> {
    let stop = match o.get("stop") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| ApiError::invalid("stop", "`stop` must be strings"))?,
        Some(_) => {
            return Err(ApiError::invalid(
                "stop",
                "`stop` must be a string or an array of strings",
            ));
        }
    };
    bounded_stop("stop", stop)
}

/// Stop sequences (field `key`) if there are at most [`MAX_STOP`] of them, each of at most
/// [`MAX_STOP_BYTES`] bytes.
pub fn bounded_stop(key: &str, stop: Vec<String>) -> Result<Vec<String>, ApiError> {
    if stop.len() > MAX_STOP || stop.iter().any(|t| t.len() > MAX_STOP_BYTES) {
        return Err(ApiError::invalid(
            key,
            format!(
                "`{key}` may hold up to {MAX_STOP} strings of up to {MAX_STOP_BYTES} bytes each (the limits on stop sequences)"
            ),
        ));
    }
    Ok(stop)
}

/// `logit_bias`: up to [`MAX_LOGIT_BIAS`] token ids, each with a bias in [-100, 100]. Ids
/// are checked against the vocabulary by the engine, which knows it.
fn logit_bias(o: &Map<String, Value>) -> Result<Vec<(u32, f32)>, ApiError> {
    let mut out = Vec::new();
    if let Some(bias) = o.get("logit_bias").filter(|v| !v.is_null()) {
        let map = bias
            .as_object()
            .ok_or_else(|| ApiError::invalid("logit_bias", "`logit_bias` must be an object"))?;
        if map.len() > MAX_LOGIT_BIAS {
            return Err(ApiError::invalid(
                "logit_bias",
                format!(
                    "`logit_bias` has {} entries, over the limit of {MAX_LOGIT_BIAS} (the limit on logit_bias entries)",
                    map.len()
                ),
            ));
        }
        for (k, v) in map {
            let id = k.parse::<u32>().map_err(|_| {
                ApiError::invalid(
                    "logit_bias",
                    format!("`logit_bias` key `{k}` is not a token id"),
                )
            })?;
            let b = v
                .as_f64()
                .filter(|b| (-100.0..=100.0).contains(b))
                .ok_or_else(|| {
                    ApiError::invalid(
                        "logit_bias",
                        "`logit_bias` values must be numbers in [-100, 100]",
                    )
                })?;
            out.push((id, b as f32));
        }
    }
    Ok(out)
}

/// toolgram's own fields besides the biases, read the same on every API: `plan` (and the
/// server's bound on calls per reply beside it), `votes`, `max_attempts`, `repeats`,
/// `repeated_text`, `strict_schemas`, each defaulting to the server's.
pub fn toolgram_fields(
    o: &Map<String, Value>,
    config: &crate::app::ServerConfig,
    req: &mut Request,
    asks: &mut ModelAsks,
    notes: &mut Notes,
) -> Result<(), ApiError> {
    let asked_plan = opt_plan(o)?;
    asks.plan_asked = asked_plan.is_some_and(Plan::is_on);
    req.shape.plan = asked_plan.unwrap_or(config.plan);
    req.shape.max_calls = config.max_calls_per_reply;
    req.votes = votes(o, config)?;
    req.retry = retry(o, notes)?;
    req.repeats = repeats(o, config.repeats)?;
    req.sampling.stop_repeated_text = stop_repeated_text(o, config.stop_repeated_text)?;
    req.strict_schemas = strict_schemas(o, config.strict_schemas)?;
    Ok(())
}

/// The repeat policy: toolgram's own `repeats` extension (`allow`, `list`, `forbid`), else the
/// server's.
fn repeats(
    o: &Map<String, Value>,
    default: toolgram_runtime::Repeats,
) -> Result<toolgram_runtime::Repeats, ApiError> {
    match opt_str(o, "repeats")? {
        None => Ok(default),
        Some(name) => toolgram_runtime::Repeats::from_name(name)
            .ok_or_else(|| ApiError::invalid("repeats", "`repeats` must be allow, list or forbid")),
    }
}

/// Whether free text that repeats itself verbatim is stopped: toolgram's own `repeated_text`
/// extension (`stop`, `keep`), else the server's `--repeated-text`.
fn stop_repeated_text(o: &Map<String, Value>, default: bool) -> Result<bool, ApiError> {
    match opt_str(o, "repeated_text")? {
        None => Ok(default),
        Some("stop") => Ok(true),
        Some("keep") => Ok(false),
        Some(_) => Err(ApiError::invalid(
            "repeated_text",
            "`repeated_text` must be stop or keep",
        )),
    }
}

/// Whether unknown schema keywords are refused: toolgram's own `strict_schemas` extension,
/// else the server's `--strict-schemas`.
fn strict_schemas(o: &Map<String, Value>, default: bool) -> Result<bool, ApiError> {
    Ok(opt_bool(o, "strict_schemas")?.unwrap_or(default))
}

/// Most attempts a request may ask for (`max_attempts`); more are clamped to it, with a note.
pub const MAX_ATTEMPTS: u64 = 8;

/// The retry policy: toolgram's own `max_attempts` extension, default 3, from 1 to
/// [`MAX_ATTEMPTS`] (a value outside is clamped, and the note says so).
fn retry(o: &Map<String, Value>, notes: &mut Notes) -> Result<RetryPolicy, ApiError> {
    let mut p = RetryPolicy::default();
    if let Some(n) = opt_uint(o, "max_attempts")? {
        let kept = n.clamp(1, MAX_ATTEMPTS);
        if kept != n {
            notes.push(format!(
                "`max_attempts` {n} is outside 1 to {MAX_ATTEMPTS}: {kept} attempts are made"
            ));
        }
        p.max_attempts = usize::try_from(kept).unwrap_or(3);
    }
    Ok(p)
}

/// A request's tool pool as read: the tools offered to the model, the ones left out (hosted
/// tools this server cannot run), and the namespace each namespaced function came from.
pub struct Pool {
    /// The tools offered.
    pub tools: ToolSet,
    /// Tools left out, with why.
    pub not_offered: Vec<FilteredTool>,
    /// Function name → the `namespace` tool that grouped it (Responses).
    pub namespaces: HashMap<String, String>,
}

/// Tool types OpenAI and Anthropic run on their own servers, or that need an environment this
/// server does not have: the model is not offered them.
fn hosted_reason(kind: &str) -> String {
    format!("hosted tool type `{kind}`: run by the vendor's servers, which this server is not")
}

/// Most tools in one request (a namespace's functions count one each). Agents send tens
/// (Claude Code about 20 to 40); 512 leaves room for large MCP setups.
pub const MAX_TOOLS: usize = 512;

/// Most bytes of tool definitions in one request, as compact JSON (Claude Code's tools are
/// about 100 KB).
pub const MAX_TOOL_BYTES: usize = 2 << 20;

/// Bytes a value takes as compact JSON, counted without writing it anywhere.
fn json_bytes(v: &[Value]) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing to a counter cannot fail, and a `Value` always serializes.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Refuse a pool past [`MAX_TOOLS`] tools or [`MAX_TOOL_BYTES`] bytes.
fn bounded(items: &[Value], param: &str) -> Result<(), ApiError> {
    let count: usize = items
        .iter()
        .map(|t| match t.get("tools").and_then(Value::as_array) {
            Some(inner) if t.get("type").and_then(Value::as_str) == Some("namespace") => {
                inner.len()
            }
            _ => 1,
        })
        .sum();
    if count > MAX_TOOLS {
        return Err(ApiError::invalid(
            param,
            format!(
                "{count} tools, over the limit of {MAX_TOOLS} (the limit on tools in a request)"
            ),
        ));
    }
    let bytes = json_bytes(items);
    if bytes > MAX_TOOL_BYTES {
        return Err(ApiError::invalid(
            param,
            format!(
                "the tool definitions take {bytes} bytes, over the limit of {MAX_TOOL_BYTES} (the limit on tool definition bytes)"
            ),
        ));
    }
    Ok(())
}

/// How one API reads a tool item into a [`Tool`] (`at`: its JSON pointer in the request):
/// `None` for a type this server cannot run (a hosted tool).
pub type ReadTool = fn(&Value, &str) -> Option<Result<Tool, DefinitionError>>;

/// The tool pool from `items`, each read by the API's `read` straight into a [`Tool`]
/// (Responses' `namespace` groups opened), within [`MAX_TOOLS`] and [`MAX_TOOL_BYTES`]; a
/// tool `read` cannot take is a hosted tool, left out and listed, or a 400 under
/// [`HostedTools::Refuse`].
pub fn pool(
    items: &[Value],
    hosted: HostedTools,
    param: &str,
    read: ReadTool,
) -> Result<Pool, ApiError> {
    bounded(items, param)?;
    let mut tools = Vec::with_capacity(items.len());
    let mut not_offered = Vec::new();
    let mut namespaces = HashMap::new();
    let invalid = |e: DefinitionError| ApiError::from(RunError::from(e)).param(param);
    // Each item read and offered, or left out (or refused) as a hosted tool.
    let mut offer = |t: &Value, at: &str, field: &str, ns: Option<&str>| -> Result<(), ApiError> {
        let kind = t.get("type").and_then(Value::as_str).unwrap_or("");
        match read(t, at) {
            Some(tool) => {
                let tool = tool.map_err(invalid)?;
                if let Some(ns) = ns {
                    namespaces.insert(tool.name.clone(), ns.to_owned());
                }
                tools.push(tool);
            }
            None if hosted == HostedTools::Refuse => {
                let name = t.get("name").and_then(Value::as_str).unwrap_or(kind);
                return Err(ApiError::invalid(
                    &format!("{field}.type"),
                    format!(
                        "tool `{name}`: {} (this server refuses hosted tools: --hosted-tools filter offers the rest)",
                        hosted_reason(kind)
                    ),
                ));
            }
            None => {
                let name = t.get("name").and_then(Value::as_str).unwrap_or(kind);
                not_offered.push(FilteredTool::new(name, hosted_reason(kind)));
            }
        }
        Ok(())
    };
    for (i, t) in items.iter().enumerate() {
        let field = format!("{param}[{i}]");
        if t.get("type").and_then(Value::as_str) != Some("namespace") {
            offer(t, &format!("/{i}"), &field, None)?;
            continue;
        }
        let ns = t.get("name").and_then(Value::as_str).unwrap_or("");
        let inner = t
            .get("tools")
            .and_then(Value::as_array)
            .ok_or_else(|| ApiError::invalid(&field, "a namespace tool needs an array `tools`"))?;
        for (j, f) in inner.iter().enumerate() {
            offer(
                f,
                &format!("/{i}/tools/{j}"),
                &format!("{field}.tools[{j}]"),
                Some(ns),
            )?;
        }
    }
    let tools = ToolSet::new(tools).map_err(invalid)?;
    Ok(Pool {
        tools,
        not_offered,
        namespaces,
    })
}

/// The pool of a body's `tools` field.
pub fn tools(o: &Map<String, Value>, hosted: HostedTools) -> Result<Pool, ApiError> {
    match o.get("tools") {
        None | Some(Value::Null) => pool(&[], hosted, "tools", chat::tools::read),
        Some(Value::Array(a)) => pool(a, hosted, "tools", chat::tools::read),
        Some(_) => Err(ApiError::invalid("tools", "`tools` must be an array")),
    }
}

/// `response_format` (Chat) or `text.format` (Responses): `None` for plain text.
pub fn response_format(v: Option<&Value>, param: &str) -> Result<Option<ResponseFormat>, ApiError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    match v.get("type").and_then(Value::as_str) {
        Some("text") => Ok(None),
        Some("json_object") => Ok(Some(ResponseFormat::JsonObject)),
        Some("json_schema") => {
            // Chat nests it under `json_schema`; Responses puts it at the top level.
            let spec = v.get("json_schema").unwrap_or(v);
            let schema = spec
                .get("schema")
                .filter(|s| s.is_object())
                .ok_or_else(|| {
                    ApiError::invalid(param, "a json_schema format needs an object `schema`")
                })?;
            Ok(Some(ResponseFormat::JsonSchema(schema.clone())))
        }
        _ => Err(ApiError::invalid(
            param,
            "the format must be text, json_object or json_schema",
        )),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    fn function(name: &str) -> Value {
        json!({"type": "function", "name": name, "parameters": {"type": "object"}})
    }

    /// What reading `items` as a pool (hosted tools filtered) refuses them with.
    pub(crate) fn pool_refusal(items: &[Value], read: ReadTool) -> String {
        let e = pool(items, HostedTools::Filter, "tools", read).err();
        e.expect("refused").fields().message.clone()
    }

    /// `repeated_text` says whether text that repeats itself is stopped (`stop`, `keep`), else
    /// the server's setting does; anything else is refused by name.
    #[test]
    fn repeated_text_is_stop_or_keep_else_the_servers() {
        let read = |v: Value| stop_repeated_text(v.as_object().expect("object"), true);
        assert_eq!(read(json!({})).ok(), Some(true));
        assert_eq!(read(json!({"repeated_text": "keep"})).ok(), Some(false));
        assert_eq!(read(json!({"repeated_text": "stop"})).ok(), Some(true));
        let Err(e) = read(json!({"repeated_text": "drop"})) else {
            panic!("`drop` was taken");
        };
        assert_eq!(e.fields().param.as_deref(), Some("repeated_text"));
    }

    /// Each shape reads straight into a `Tool`: a definition error points at the client's own
    /// field, and a namespace member that is not a function is left out by itself.
    #[test]
    fn tools_read_in_their_own_shape_and_errors_point_into_it() {
        let flat = vec![function("a"), json!({"type": "function", "parameters": {}})];
        let m = pool_refusal(&flat, chat::tools::read);
        assert!(m.contains("/1/name"), "{m}");
        let grouped = vec![json!({"type": "namespace", "name": "ns", "tools": [
            function("b"), {"type": "web_search"}, function("c")]})];
        let p = pool(&grouped, HostedTools::Filter, "tools", chat::tools::read).expect("reads");
        let names: Vec<&str> = p.tools.tools().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
        assert_eq!(p.not_offered.len(), 1);
        let refused = pool(&grouped, HostedTools::Refuse, "tools", chat::tools::read).err();
        let refused = refused.expect("refused");
        assert_eq!(
            refused.fields().param.as_deref(),
            Some("tools[0].tools[1].type")
        );
    }

    /// A namespace's functions are offered under their names and remember their namespace;
    /// hosted tools are left out with a reason, or refused.
    #[test]
    fn namespaces_are_offered_and_hosted_tools_left_out_or_refused() {
        let items = vec![
            function("shell"),
            json!({"type": "namespace", "name": "mcp__files", "tools": [function("read_file")]}),
            json!({"type": "web_search"}),
            json!({"type": "web_search_20250305", "name": "web_search_tool"}),
        ];
        let pool = pool(&items, HostedTools::Filter, "tools", chat::tools::read).expect("reads");
        let names: Vec<&str> = pool.tools.tools().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["shell", "read_file"]);
        assert_eq!(
            pool.namespaces.get("read_file").map(String::as_str),
            Some("mcp__files")
        );
        let out: Vec<&str> = pool.not_offered.iter().map(|f| f.tool.as_str()).collect();
        assert_eq!(out, ["web_search", "web_search_tool"]);
        assert!(pool.not_offered[0].reason.contains("hosted"));
        let refused = super::pool(&items, HostedTools::Refuse, "tools", chat::tools::read)
            .err()
            .expect("refused");
        assert_eq!(refused.fields().status, axum::http::StatusCode::BAD_REQUEST);
        assert!(refused.fields().message.contains("web_search"));
    }

    fn refused(body: Value) -> String {
        let config = crate::app::ServerConfig::default();
        let mut asks = ModelAsks::default();
        let e = sampling(
            body.as_object().expect("object"),
            &["max_tokens"],
            &config,
            &mut asks,
        )
        .expect_err("refused");
        assert_eq!(e.fields().status, axum::http::StatusCode::BAD_REQUEST);
        e.fields().message.clone()
    }

    #[test]
    fn logit_bias_and_stop_past_their_limits_are_400s_naming_them() {
        let bias: Map<String, Value> = (0..=MAX_LOGIT_BIAS)
            .map(|i| (i.to_string(), json!(1)))
            .collect();
        let m = refused(json!({"logit_bias": bias}));
        assert!(m.contains("limit on logit_bias entries"), "{m}");
        let long = "x".repeat(MAX_STOP_BYTES + 1);
        let m = refused(json!({"stop": long}));
        assert!(m.contains("limits on stop sequences"), "{m}");
        let m = refused(json!({"stop": ["a", "b", "c", "d", "e"]}));
        assert!(m.contains("limits on stop sequences"), "{m}");
    }

    #[test]
    fn tool_pools_past_their_limits_are_400s_naming_them() {
        let many: Vec<Value> = (0..=MAX_TOOLS)
            .map(|i| function(&format!("f{i}")))
            .collect();
        let m = pool_refusal(&many, chat::tools::read);
        assert!(m.contains("limit on tools"), "{m}");
        let grouped = vec![json!({"type": "namespace", "name": "n", "tools": many})];
        assert!(pool(&grouped, HostedTools::Filter, "tools", chat::tools::read).is_err());
        let big = json!({"type": "function", "name": "big", "description": "d".repeat(MAX_TOOL_BYTES),
            "parameters": {"type": "object"}});
        let m = pool_refusal(&[big], chat::tools::read);
        assert!(m.contains("limit on tool definition bytes"), "{m}");
        let fine: Vec<Value> = (0..40).map(|i| function(&format!("f{i}"))).collect();
        assert!(pool(&fine, HostedTools::Filter, "tools", chat::tools::read).is_ok());
    }

    /// A model whose replies get at most `max_tokens`: a provider's runtime, never reached.
    fn served(max_tokens: usize) -> Served {
        use toolgram_runtime::{Backend, ProviderConfig, Runtime};
        let overrides = toolgram_providers::Overrides {
            base_url: Some("http://127.0.0.1:9".into()),
            model: Some("m".into()),
            ..toolgram_providers::Overrides::default()
        };
        let provider = toolgram_providers::Config::default()
            .resolve("llama-server", &overrides)
            .expect("resolves");
        let runtime = Runtime::new(Backend::Provider(ProviderConfig {
            provider,
            stream: false,
        }))
        .expect("a provider runtime");
        Served {
            id: "m".into(),
            runtime,
            max_tokens,
            timeout: std::time::Duration::from_secs(1),
            deadline: tokio::time::Instant::now(),
        }
    }

    /// `body`'s token limit settled on a model whose limit is `limit`, with the notes.
    fn settled(body: &Value, limit: usize) -> Result<(usize, Notes), ApiError> {
        let config = crate::app::ServerConfig::default();
        let mut asks = ModelAsks::default();
        let sampling = sampling(
            body.as_object().expect("object"),
            &["max_tokens"],
            &config,
            &mut asks,
        )?;
        let tools = ToolSet::new(Vec::new()).expect("no tools");
        let mut req = Request::new(Vec::new(), tools);
        req.sampling = sampling;
        let mut notes = Notes::new();
        asks.apply(&served(limit), &mut req, &mut notes);
        Ok((req.sampling.max_tokens, notes))
    }

    /// With the context as the limit (the default), an agent's 32,000 is honoured and a
    /// request naming none gets [`DEFAULT_MAX_TOKENS`].
    #[test]
    fn an_agents_limit_is_honoured_up_to_the_context_and_none_named_gets_the_default() {
        let (asked, notes) = settled(&json!({"max_tokens": 32000}), 32768).expect("read");
        assert_eq!(asked, 32000);
        assert!(notes.is_empty(), "{notes:?}");
        let (none, notes) = settled(&json!({}), 32768).expect("read");
        assert_eq!(none, DEFAULT_MAX_TOKENS);
        assert!(notes.is_empty(), "{notes:?}");
        let (small, _) = settled(&json!({}), 512).expect("read");
        assert_eq!(small, 512, "the default within a smaller limit");
    }

    #[test]
    fn a_max_tokens_above_the_limit_is_capped_and_said() {
        let (capped, notes) = settled(&json!({"max_tokens": 128000}), 2048).expect("capped");
        assert_eq!(capped, 2048);
        assert!(notes[0].contains("capped"), "{notes:?}");
        assert!(settled(&json!({"max_tokens": 0}), 2048).is_err());
    }

    #[test]
    fn max_attempts_outside_its_bounds_is_clamped_and_said() {
        let mut notes = Notes::new();
        let o = json!({"max_attempts": 1_000_000});
        let p = retry(o.as_object().expect("object"), &mut notes).expect("clamped");
        assert_eq!(p.max_attempts, 8);
        assert!(notes[0].contains("1000000"), "{notes:?}");
        let o = json!({"max_attempts": 2});
        let mut quiet = Notes::new();
        assert_eq!(
            retry(o.as_object().expect("object"), &mut quiet)
                .expect("read")
                .max_attempts,
            2
        );
        assert!(quiet.is_empty());
    }
}
