//! The MCP servers of one front end, as one source of tools: each tool read into a core
//! [`Tool`] and routed back to the server that listed it, a list read again once its server
//! says it changed. This module must not loop or decide what to call.

use crate::error::McpError;
use crate::result::ToolResult;
use crate::server::Server;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use toolgram_core::Tool;
use toolgram_core::define::read_tools::read_function;

/// One listed tool: the server that lists it (its index), the tool, its output check, its
/// read-only hint.
struct Listed {
    server: usize,
    tool: Tool,
    output: Option<Arc<jsonschema::Validator>>,
    read_only: bool,
}

/// A tool as a server lists it.
#[derive(Debug, Clone)]
pub struct SourceTool {
    /// The server's name, as declared.
    pub server: String,
    /// The tool, read as any function is.
    pub tool: Tool,
    /// The server says it changes nothing (`annotations.readOnlyHint`).
    pub read_only: bool,
}

/// Started MCP servers and the tools they list, shared by every thread that runs a loop (a
/// server takes several requests at once). Blocking, with a runtime of its own: use it from
/// threads that are not a tokio runtime's workers (the CLI, the run stage's threads, tokio's
/// blocking pool); a server is killed when its sources are dropped (only the process
/// started: a wrapper such as `npx` must end its own children when its stdin closes, as the
/// reference servers do).
pub struct ToolSources {
    /// `None` only while being dropped.
    rt: Option<tokio::runtime::Runtime>,
    servers: Vec<Server>,
    listed: Mutex<Vec<Listed>>,
    /// Bumped each time the list is read again.
    generation: AtomicU64,
}

impl std::fmt::Debug for ToolSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSources")
            .field(
                "servers",
                &self.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Drop for ToolSources {
    /// The servers stopped, then their runtime let go without waiting: the sources may be
    /// dropped inside another runtime (a server's state at exit), where waiting would panic.
    fn drop(&mut self) {
        self.servers.clear();
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl ToolSources {
    /// Start every server in `servers` (a name and a command line: stdio) and list their
    /// tools; each request to a server is given `timeout`.
    pub fn start(servers: &[(String, String)], timeout: Duration) -> Result<Self, McpError> {
        for (i, (name, _)) in servers.iter().enumerate() {
            if servers[..i].iter().any(|(other, _)| other == name) {
                return Err(McpError::Declaration {
                    server: name.clone(),
                    message: "two servers have this name".into(),
                });
            }
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolgram-mcp")
            .enable_all()
            .build()
            .map_err(|e| McpError::Start {
                server: servers
                    .iter()
                    .map(|(name, _)| name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                message: format!("no async runtime: {e}"),
            })?;
        let servers = servers
            .iter()
            .map(|(name, command)| Server::start(&rt, name, command, timeout))
            .collect::<Result<Vec<_>, _>>()?;
        let sources = Self {
            rt: Some(rt),
            servers,
            listed: Mutex::new(Vec::new()),
            generation: AtomicU64::new(0),
        };
        *sources.lock() = sources.list_all()?;
        Ok(sources)
    }

    /// The servers' names, as declared.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|s| s.name.as_str())
    }

    /// The tools every server lists, each with its server's name, read again first where a
    /// server said its list changed (talking to it: blocking).
    pub fn tools(&self) -> Result<Vec<SourceTool>, McpError> {
        self.refresh()?;
        Ok(self.snapshot().1)
    }

    /// Read again the lists of the servers that said theirs changed — without holding the
    /// list, so readers of [`Self::snapshot`] never wait on a server — and return the
    /// generation now (bumped by each new list).
    pub fn refresh(&self) -> Result<u64, McpError> {
        if self.servers.iter().any(Server::tools_changed) {
            tracing::info!("an MCP server's tool list changed: reading it again");
            let fresh = self.list_all()?;
            let mut listed = self.lock();
            *listed = fresh;
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        Ok(self.generation.load(Ordering::SeqCst))
    }

    /// The tools as last read and the generation of that list, asking no server: what a
    /// request is offered when it is read (never waits on a server).
    pub fn snapshot(&self) -> (u64, Vec<SourceTool>) {
        let listed = self.lock();
        let generation = self.generation.load(Ordering::SeqCst);
        (
            generation,
            listed.iter().map(|l| self.source_tool(l)).collect(),
        )
    }

    fn source_tool(&self, l: &Listed) -> SourceTool {
        SourceTool {
            server: self.servers[l.server].name.clone(),
            tool: l.tool.clone(),
            read_only: l.read_only,
        }
    }

    /// The listed tool named `tool`; `None` when no server lists it.
    pub fn find(&self, tool: &str) -> Option<SourceTool> {
        let listed = self.lock();
        let l = listed.iter().find(|l| l.tool.name == tool)?;
        Some(self.source_tool(l))
    }

    /// Call `tool` on the server that lists it, within the server's timeout or `limit` if
    /// sooner (what is left of a request's deadline).
    pub fn call(
        &self,
        tool: &str,
        arguments: &Value,
        limit: Option<Duration>,
    ) -> Result<ToolResult, McpError> {
        let (server, output) = {
            let listed = self.lock();
            let l = listed
                .iter()
                .find(|l| l.tool.name == tool)
                .ok_or_else(|| McpError::UnknownTool(tool.to_owned()))?;
            (l.server, l.output.clone())
        };
        self.servers[server].call(self.rt()?, tool, arguments, output.as_deref(), limit)
    }

    fn rt(&self) -> Result<&tokio::runtime::Runtime, McpError> {
        self.rt.as_ref().ok_or_else(|| McpError::Failed {
            server: String::new(),
            method: "any".into(),
            message: "the MCP servers are being stopped".into(),
        })
    }

    /// The list, poisoned or not (a panic while listing leaves the old list whole).
    fn lock(&self) -> MutexGuard<'_, Vec<Listed>> {
        self.listed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn list_all(&self) -> Result<Vec<Listed>, McpError> {
        let mut listed: Vec<Listed> = Vec::new();
        for (i, server) in self.servers.iter().enumerate() {
            for (k, item) in server.list_tools(self.rt()?)?.iter().enumerate() {
                let offered = |message: String| McpError::Tool {
                    server: server.name.clone(),
                    message,
                };
                let object = item
                    .as_object()
                    .ok_or_else(|| offered("a tool that is not an object".into()))?;
                let tool = read_function(
                    object,
                    &format!("/tools/{k}"),
                    "inputSchema",
                    json!({"type": "object", "properties": {}}),
                )
                .map_err(|e| offered(e.to_string()))?;
                if listed.iter().any(|l| l.tool.name == tool.name) {
                    return Err(offered(format!("`{}` is listed by two servers", tool.name)));
                }
                let output = object
                    .get("outputSchema")
                    .map(jsonschema::validator_for)
                    .transpose()
                    .map_err(|e| offered(format!("`{}`'s outputSchema: {e}", tool.name)))?;
                let read_only = object
                    .get("annotations")
                    .and_then(|a| a.get("readOnlyHint"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                listed.push(Listed {
                    server: i,
                    tool,
                    output: output.map(Arc::new),
                    read_only,
                });
            }
        }
        Ok(listed)
    }
}
