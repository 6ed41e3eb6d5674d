//! The MCP servers of one front end, as one source of tools: each tool read into a core
//! [`Tool`] and routed back to the server that listed it, a list read again once its server
//! says it changed. This module must not loop or decide what to call.

use crate::error::McpError;
use crate::result::ToolResult;
use crate::server::Server;
use serde_json::{Value, json};
use std::time::Duration;
use toolgram_core::Tool;
use toolgram_core::define::read_tools::read_function;

/// One listed tool: the server that lists it (its index), the tool, its output check.
struct Listed {
    server: usize,
    tool: Tool,
    output: Option<jsonschema::Validator>,
}

/// Started MCP servers and the tools they list. Blocking, with a runtime of its own: use it
/// from threads that are not a tokio runtime's (the CLI, the run stage's threads); a server
/// is killed when its sources are dropped (only the process started: a wrapper such as `npx`
/// must end its own children when its stdin closes, as the reference servers do).
pub struct ToolSources {
    rt: tokio::runtime::Runtime,
    servers: Vec<Server>,
    listed: Vec<Listed>,
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

impl ToolSources {
    /// Start every server in `commands` (command lines: stdio) and list their tools; each
    /// request to a server is given `timeout`.
    pub fn start(commands: &[String], timeout: Duration) -> Result<Self, McpError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolgram-mcp")
            .enable_all()
            .build()
            .map_err(|e| McpError::Start {
                server: commands.join(", "),
                message: format!("no async runtime: {e}"),
            })?;
        let servers = commands
            .iter()
            .map(|c| Server::start(&rt, c, timeout))
            .collect::<Result<Vec<_>, _>>()?;
        let mut sources = Self {
            rt,
            servers,
            listed: Vec::new(),
        };
        sources.relist()?;
        Ok(sources)
    }

    /// The tools every server lists, read again first where a server said its list changed.
    pub fn tools(&mut self) -> Result<Vec<Tool>, McpError> {
        if self.servers.iter().any(Server::tools_changed) {
            tracing::info!("an MCP server's tool list changed: reading it again");
            self.relist()?;
        }
        Ok(self.listed.iter().map(|l| l.tool.clone()).collect())
    }

    /// Whether a server lists `tool`.
    pub fn lists(&self, tool: &str) -> bool {
        self.listed.iter().any(|l| l.tool.name == tool)
    }

    /// The server (as declared) that lists `tool`.
    pub fn server_of(&self, tool: &str) -> Option<&str> {
        let l = self.listed.iter().find(|l| l.tool.name == tool)?;
        Some(&self.servers[l.server].name)
    }

    /// Call `tool` on the server that lists it.
    pub fn call(&self, tool: &str, arguments: &Value) -> Result<ToolResult, McpError> {
        let l = self
            .listed
            .iter()
            .find(|l| l.tool.name == tool)
            .ok_or_else(|| McpError::UnknownTool(tool.to_owned()))?;
        self.servers[l.server].call(&self.rt, tool, arguments, l.output.as_ref())
    }

    fn relist(&mut self) -> Result<(), McpError> {
        let mut listed: Vec<Listed> = Vec::new();
        for (i, server) in self.servers.iter().enumerate() {
            for (k, item) in server.list_tools(&self.rt)?.iter().enumerate() {
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
                listed.push(Listed {
                    server: i,
                    tool,
                    output,
                });
            }
        }
        self.listed = listed;
        Ok(())
    }
}
