//! The MCP servers declared at start (`serve --mcp NAME=SERVER`) as one request uses them:
//! which servers and tools it names (Responses' `mcp` tools; Anthropic's `mcp_servers` with
//! their `mcp_toolset`s), their tools put in its pool, which calls wait for the client's
//! approval (`require_approval`), and its tool loop run on the blocking pool under the
//! request's one deadline. A server is matched by its declared name only: a URL a client
//! sends is never reached, a name nobody declared is left out and said (a 400 under
//! `--hosted-tools refuse`). This module must not write an API's shapes or run a call itself
//! (the runtime's loop does).

use crate::app::{App, HostedTools, Served};
use crate::error::ApiError;
use crate::params::Notes;
use crate::run::{self, Events};
use serde_json::{Map, Value};
use std::sync::Arc;
use toolgram_core::ToolSet;
use toolgram_runtime::{
    Approval, FilteredTool, Offered, Ready, Request, Response, RunError, SourceTool, ToolLoop,
};

/// Which of a server's tools need the client's approval before they run.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Approvals {
    /// None (`"never"`; Anthropic's connector).
    Never,
    /// Every call (`"always"`, OpenAI's default).
    Always,
    /// Those named under `never` run at once; every other waits.
    AllBut(Vec<String>),
}

/// One declared server as a request names it.
#[derive(Debug, Clone)]
pub struct ServerUse {
    /// Its declared name (a Responses `server_label`, an Anthropic server `name`).
    pub name: String,
    /// The tools offered (`None`: all).
    allowed: Option<Vec<String>>,
    /// Only tools the server marks read-only (`allowed_tools.read_only`).
    read_only: bool,
    approvals: Approvals,
}

impl ServerUse {
    fn offers(&self, t: &SourceTool) -> bool {
        t.server == self.name
            && self
                .allowed
                .as_ref()
                .is_none_or(|a| a.contains(&t.tool.name))
            && (!self.read_only || t.read_only)
    }

    fn asks(&self, t: &SourceTool) -> bool {
        match &self.approvals {
            Approvals::Never => false,
            Approvals::Always => true,
            Approvals::AllBut(never) => !never.contains(&t.tool.name),
        }
    }
}

/// The servers one request uses, and its answers to calls that waited for approval.
#[derive(Debug, Clone, Default)]
pub struct McpUse {
    /// The servers it names, as declared.
    pub servers: Vec<ServerUse>,
    /// Its `mcp_approval_response`s.
    pub approvals: Vec<Approval>,
    /// The tools it was offered when it was read ([`offer`], from the servers' last lists:
    /// no server asked), which its first turn's pool holds and its reply lists.
    pub offered: Offered,
}

impl McpUse {
    /// Whether the request is offered `t`.
    pub fn offers(&self, t: &SourceTool) -> bool {
        self.servers.iter().any(|s| s.offers(t))
    }

    /// Whether a call to `t` waits for the client's approval.
    pub fn asks(&self, t: &SourceTool) -> bool {
        self.servers.iter().any(|s| s.offers(t) && s.asks(t))
    }
}

/// The tools the declared servers listed last (no server asked: a reader must not wait on
/// one).
fn listed(app: &App) -> Vec<SourceTool> {
    app.mcp.as_ref().map(|s| s.snapshot().1).unwrap_or_default()
}

/// Whether `name` is a declared server; else it is left out with a reason in
/// `not_offered` (a 400 naming `field` under `--hosted-tools refuse`).
fn declared(
    app: &App,
    name: &str,
    field: &str,
    not_offered: &mut Vec<FilteredTool>,
) -> Result<bool, ApiError> {
    if app
        .mcp
        .as_ref()
        .is_some_and(|s| s.names().any(|n| n == name))
    {
        return Ok(true);
    }
    let reason = format!(
        "MCP server `{name}` was not declared when this server started (serve --mcp NAME=SERVER): it is never reached"
    );
    if app.config.hosted_tools == HostedTools::Refuse {
        return Err(ApiError::invalid(
            field,
            format!("{reason} (this server refuses hosted tools)"),
        ));
    }
    not_offered.push(FilteredTool::new(name, reason));
    Ok(false)
}

/// Names in `v`: an array of strings, or an object's `tool_names`.
fn names(v: &Value, field: &str) -> Result<Option<Vec<String>>, ApiError> {
    let list = match v {
        Value::Null => return Ok(None),
        Value::Array(a) => a,
        Value::Object(o) => match o.get("tool_names") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Array(a)) => a,
            Some(_) => {
                return Err(ApiError::invalid(field, "`tool_names` must be an array"));
            }
        },
        _ => return Err(ApiError::invalid(field, "expected tool names")),
    };
    list.iter()
        .map(|n| {
            n.as_str()
                .map(str::to_owned)
                .ok_or_else(|| ApiError::invalid(field, "a tool name must be a string"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A Responses `{"type": "mcp"}` tool at `field`: the declared server it names, or `None`
/// when it names none (left out and said). `server_url`, `connector_id`, `authorization`
/// and `headers` are never used: the server declared under the label is.
fn responses_tool(
    app: &App,
    item: &Value,
    field: &str,
    not_offered: &mut Vec<FilteredTool>,
    notes: &mut Notes,
) -> Result<Option<ServerUse>, ApiError> {
    let label = item
        .get("server_label")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::invalid(field, "an `mcp` tool needs a `server_label`"))?;
    if !declared(app, label, &format!("{field}.server_label"), not_offered)? {
        return Ok(None);
    }
    for key in ["server_url", "connector_id", "authorization", "headers"] {
        if item.get(key).is_some_and(|v| !v.is_null()) {
            notes.push(format!(
                "{field}.{key}: not used — `{label}` is the MCP server declared under that name at start"
            ));
        }
    }
    let allowed_field = format!("{field}.allowed_tools");
    let allowed = item.get("allowed_tools").unwrap_or(&Value::Null);
    let read_only = allowed.get("read_only").and_then(Value::as_bool) == Some(true);
    let approvals = match item.get("require_approval").unwrap_or(&Value::Null) {
        Value::Null => Approvals::Always,
        Value::String(s) if s == "always" => Approvals::Always,
        Value::String(s) if s == "never" => Approvals::Never,
        Value::Object(o) => {
            let never_field = format!("{field}.require_approval.never");
            let never = o.get("never").unwrap_or(&Value::Null);
            if never.get("read_only").is_some_and(|v| !v.is_null()) {
                return Err(ApiError::invalid(
                    &never_field,
                    "`read_only` in `require_approval` is not supported: name the tools",
                ));
            }
            Approvals::AllBut(names(never, &never_field)?.unwrap_or_default())
        }
        _ => {
            return Err(ApiError::invalid(
                &format!("{field}.require_approval"),
                "`require_approval` must be \"always\", \"never\" or an object",
            ));
        }
    };
    Ok(Some(ServerUse {
        name: label.to_owned(),
        allowed: names(allowed, &allowed_field)?,
        read_only,
        approvals,
    }))
}

/// A Responses request's `tools` without its `mcp` tools, and the declared servers those
/// name with `approvals` (its `mcp_approval_response`s: `None` when it names none). An
/// approval without a declared server's `mcp` tool is a 400.
pub fn responses_tools(
    app: &App,
    tools: Vec<Value>,
    approvals: Vec<(String, bool)>,
    not_offered: &mut Vec<FilteredTool>,
    notes: &mut Notes,
) -> Result<(Vec<Value>, Option<McpUse>), ApiError> {
    let mut servers = Vec::new();
    let mut kept = Vec::with_capacity(tools.len());
    for (i, t) in tools.into_iter().enumerate() {
        if t.get("type").and_then(Value::as_str) == Some("mcp") {
            let field = format!("tools[{i}]");
            servers.extend(responses_tool(app, &t, &field, not_offered, notes)?);
        } else {
            kept.push(t);
        }
    }
    if !approvals.is_empty() && servers.is_empty() {
        return Err(ApiError::invalid(
            "input",
            "an `mcp_approval_response` needs the `mcp` tool of a declared server in `tools`",
        ));
    }
    let approvals = approvals
        .into_iter()
        .map(|(call_id, approve)| Approval { call_id, approve })
        .collect();
    let mcp = (!servers.is_empty()).then_some(McpUse {
        servers,
        approvals,
        offered: Offered::default(),
    });
    Ok((kept, mcp))
}

/// Anthropic's MCP connector: each of `mcp_servers` (`name`, `url`; its `url` and
/// `authorization_token` never used) that names a declared server, configured by the
/// `mcp_toolset` in `tools` that names it (`default_config.enabled`, `configs`; taken out of
/// `tools`) or its own `tool_configuration`; no approvals (the connector has none).
pub fn anthropic_servers(
    app: &App,
    o: &Map<String, Value>,
    tools: &mut Vec<Value>,
    not_offered: &mut Vec<FilteredTool>,
    notes: &mut Notes,
) -> Result<Option<McpUse>, ApiError> {
    let servers = match o.get("mcp_servers") {
        None | Some(Value::Null) => &Vec::new(),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(ApiError::invalid(
                "mcp_servers",
                "`mcp_servers` must be an array",
            ));
        }
    };
    let (toolsets, rest): (Vec<Value>, Vec<Value>) = std::mem::take(tools)
        .into_iter()
        .partition(|t| t.get("type").and_then(Value::as_str) == Some("mcp_toolset"));
    *tools = rest;
    if servers.is_empty() && toolsets.is_empty() {
        return Ok(None);
    }
    let mut used = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        let field = format!("mcp_servers[{i}]");
        let name = s
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ApiError::invalid(&field, "an MCP server needs a `name`"))?;
        if !declared(app, name, &format!("{field}.name"), not_offered)? {
            continue;
        }
        for key in ["url", "authorization_token"] {
            if s.get(key).is_some_and(|v| !v.is_null()) {
                notes.push(format!(
                    "{field}.{key}: not used — `{name}` is the MCP server declared under that name at start"
                ));
            }
        }
        let config = s.get("tool_configuration").unwrap_or(&Value::Null);
        if config.get("enabled").and_then(Value::as_bool) == Some(false) {
            continue;
        }
        let mut allowed = names(
            config.get("allowed_tools").unwrap_or(&Value::Null),
            &format!("{field}.tool_configuration.allowed_tools"),
        )?;
        if let Some(set) = toolsets
            .iter()
            .find(|t| t.get("mcp_server_name").and_then(Value::as_str) == Some(name))
        {
            let enabled =
                |v: Option<&Value>| v.and_then(|c| c.get("enabled")).and_then(Value::as_bool);
            let by_default = enabled(set.get("default_config")).unwrap_or(true);
            let configs = set.get("configs").and_then(Value::as_object);
            let on: Vec<String> = listed(app)
                .into_iter()
                .filter(|t| t.server == name)
                .map(|t| t.tool.name)
                .filter(|n| enabled(configs.and_then(|c| c.get(n))).unwrap_or(by_default))
                .filter(|n| allowed.as_ref().is_none_or(|a| a.contains(n)))
                .collect();
            allowed = Some(on);
        }
        used.push(ServerUse {
            name: name.to_owned(),
            allowed,
            read_only: false,
            approvals: Approvals::Never,
        });
    }
    for (i, set) in toolsets.iter().enumerate() {
        let name = set
            .get("mcp_server_name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !servers
            .iter()
            .any(|s| s.get("name").and_then(Value::as_str) == Some(name))
        {
            return Err(ApiError::invalid(
                "tools",
                format!("mcp_toolset {i} names `{name}`, which is not in `mcp_servers`"),
            ));
        }
    }
    Ok(Some(McpUse {
        servers: used,
        ..McpUse::default()
    }))
}

/// Put the tools `mcp` is offered into `req`'s pool (and keep them in `mcp.offered`): one
/// pool for the check, the grammar and the loop's first turn. A tool of the request's own
/// with the name of one a server lists is a 400 (a call to it could not be told apart).
pub fn offer(app: &App, mcp: &mut McpUse, req: &mut Request) -> Result<(), ApiError> {
    if let Some(sources) = &app.mcp {
        mcp.offered = Offered::read(sources, &|t: &SourceTool| mcp.offers(t));
    }
    if mcp.offered.tools.is_empty() {
        return Ok(());
    }
    let mut pool = req.tools.tools().to_vec();
    for t in mcp.offered.tools.iter().cloned() {
        if pool.iter().any(|own| own.name == t.tool.name) {
            return Err(ApiError::invalid(
                "tools",
                format!(
                    "tool `{}` is both the request's and MCP server `{}`'s",
                    t.tool.name, t.server
                ),
            ));
        }
        pool.push(t.tool);
    }
    req.tools =
        Arc::new(ToolSet::new(pool).map_err(|e| ApiError::invalid("tools", e.to_string()))?);
    Ok(())
}

/// The loop over `app`'s servers that `mcp` allows, bounded by `deadline`, handed to `work`
/// on this thread.
fn with_loop<T>(
    app: &App,
    mcp: &McpUse,
    deadline: std::time::Instant,
    work: impl FnOnce(&ToolLoop) -> T,
) -> Result<T, RunError> {
    let sources = app
        .mcp
        .as_ref()
        .ok_or_else(|| RunError::InvalidRequest("this server declared no MCP servers".into()))?;
    let offer = |t: &SourceTool| mcp.offers(t);
    let approval = |t: &SourceTool| mcp.asks(t);
    let lp = ToolLoop {
        sources,
        offer: &offer,
        approval: &approval,
        max_steps: app.config.max_steps,
        offered: mcp.offered.clone(),
        deadline: Some(deadline),
    };
    Ok(work(&lp))
}

/// Run `req`'s tool loop to its reply (the MCP servers' time counted in the request's one
/// deadline: past it, a 504 as for any run).
pub async fn run(
    app: &Arc<App>,
    served: &Served,
    req: Ready,
    mcp: Arc<McpUse>,
) -> Result<Result<Response, RunError>, ApiError> {
    let cancel = req.request().cancel.clone();
    let (app2, runtime) = (Arc::clone(app), served.runtime.clone());
    let deadline = served.deadline.into_std();
    run::run_work(app, served, cancel, move || {
        with_loop(&app2, &mcp, deadline, |lp| {
            runtime.run_tool_loop(req, lp, &mcp.approvals, &mut |_| {})
        })?
    })
    .await
}

/// Stream `req`'s tool loop: a step event as each call ends, then the reply's.
pub fn stream(
    app: &Arc<App>,
    served: &Served,
    req: Ready,
    mcp: Arc<McpUse>,
) -> Result<Events, RunError> {
    let cancel = req.request().cancel.clone();
    let (app2, runtime) = (Arc::clone(app), served.runtime.clone());
    let deadline = served.deadline.into_std();
    run::stream_work(app, served, cancel, move |sink| {
        tokio::task::spawn_blocking(move || {
            if let Err(e) = with_loop(&app2, &mcp, deadline, |lp| {
                runtime.stream_tool_loop(req, lp, &mcp.approvals, &sink);
            }) {
                sink.send(toolgram_runtime::Event::Failed(e));
            }
        });
        Ok(())
    })
}
