//! One MCP server, over stdio (started from its command line) or streamable HTTP (a URL):
//! `initialize`d, its tools listed
//! and called, each request within the timeout, on the runtime its [`crate::ToolSources`]
//! hands it. This module must not decide which server a tool belongs to.

use crate::error::McpError;
use crate::result::ToolResult;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use std::future::Future;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::runtime::Runtime;

/// Sees a server's notifications: `tools/list_changed` marks its list stale.
#[derive(Clone, Default)]
struct Watcher {
    tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for Watcher {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.tools_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }
}

/// A started MCP server.
pub(crate) struct Server {
    /// Its name, as declared (in errors and steps).
    pub(crate) name: String,
    service: RunningService<RoleClient, Watcher>,
    tools_changed: Arc<AtomicBool>,
    timeout: Duration,
}

/// The process a command line starts (split as a POSIX shell splits words, run without a
/// shell), killed when its handle goes (a failed start, the sources dropped): a server left
/// running would hold our stderr, which it shares, open.
fn command(name: &str, line: &str) -> Result<tokio::process::Command, McpError> {
    let declaration = |message: &str| McpError::Declaration {
        server: name.to_owned(),
        message: message.to_owned(),
    };
    let words = shlex::split(line).ok_or_else(|| declaration("unbalanced quotes"))?;
    let (program, args) = words
        .split_first()
        .ok_or_else(|| declaration("an empty command line"))?;
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).kill_on_drop(true);
    Ok(cmd)
}

impl Server {
    /// Start `declared` — a command line (program and arguments, shell-quoted: stdio) or an
    /// `http(s)://` URL (streamable HTTP) — and initialize it, named `name`.
    pub(crate) fn start(
        rt: &Runtime,
        name: &str,
        declared: &str,
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let watcher = Watcher::default();
        let tools_changed = Arc::clone(&watcher.tools_changed);
        let start = |message: String| McpError::Start {
            server: name.to_owned(),
            message,
        };
        let service = rt.block_on(async {
            let serving = if declared.starts_with("http://") || declared.starts_with("https://") {
                let transport = StreamableHttpClientTransport::from_uri(declared);
                tokio::time::timeout(timeout, watcher.serve(transport)).await
            } else {
                let cmd = command(name, declared)?;
                let (transport, _) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(|e| start(format!("{declared}: {e}")))?;
                tokio::time::timeout(timeout, watcher.serve(transport)).await
            };
            match serving {
                Ok(Ok(service)) => Ok(service),
                Ok(Err(e)) => Err(start(e.to_string())),
                Err(_) => Err(McpError::Timeout {
                    server: name.to_owned(),
                    method: "initialize".into(),
                    seconds: timeout.as_secs(),
                }),
            }
        })?;
        Ok(Self {
            name: name.to_owned(),
            service,
            tools_changed,
            timeout,
        })
    }

    /// Whether the server said its tool list changed since it was last read.
    pub(crate) fn tools_changed(&self) -> bool {
        self.tools_changed.load(Ordering::SeqCst)
    }

    /// Its tools, every page, as their JSON (`name`, `description`, `inputSchema`,
    /// `outputSchema`, …).
    pub(crate) fn list_tools(&self, rt: &Runtime) -> Result<Vec<Value>, McpError> {
        // Cleared first, so a change said while listing is read next time; set again when
        // the list could not be read, so it is asked for again.
        self.tools_changed.store(false, Ordering::SeqCst);
        let listed = self
            .within(rt, "tools/list", self.service.list_all_tools(), None)
            .and_then(|r| r.map_err(|e| self.failed("tools/list", &e)));
        if listed.is_err() {
            self.tools_changed.store(true, Ordering::SeqCst);
        }
        let tools = listed?;
        tools
            .iter()
            .map(|t| {
                serde_json::to_value(t).map_err(|e| McpError::Tool {
                    server: self.name.clone(),
                    message: e.to_string(),
                })
            })
            .collect()
    }

    /// Call `tool` with `arguments` (a JSON object), its result checked against `output`,
    /// within the timeout or `limit` if sooner.
    pub(crate) fn call(
        &self,
        rt: &Runtime,
        tool: &str,
        arguments: &Value,
        output: Option<&jsonschema::Validator>,
        limit: Option<Duration>,
    ) -> Result<ToolResult, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments.as_object().cloned();
        let called = self.within(rt, "tools/call", self.service.call_tool(params), limit)?;
        let result = match called {
            Ok(result) => result,
            // A JSON-RPC error is the server's answer to this call; anything else (the
            // connection ended, an answer of another kind) is the server failing.
            Err(ServiceError::McpError(e)) => {
                return Err(McpError::Refused {
                    server: self.name.clone(),
                    message: e.message.to_string(),
                });
            }
            Err(e) => return Err(self.failed("tools/call", &e)),
        };
        let json = serde_json::to_value(&result).map_err(|e| McpError::Failed {
            server: self.name.clone(),
            method: "tools/call".into(),
            message: e.to_string(),
        })?;
        Ok(ToolResult::read(&json, output))
    }

    /// Run `request` on `rt`: its own outcome, or a timeout (the server's, or `limit` if
    /// sooner).
    fn within<T>(
        &self,
        rt: &Runtime,
        method: &str,
        request: impl Future<Output = Result<T, ServiceError>>,
        limit: Option<Duration>,
    ) -> Result<Result<T, ServiceError>, McpError> {
        let timeout = limit.map_or(self.timeout, |l| l.min(self.timeout));
        // The timer is made inside the runtime: it needs its clock.
        rt.block_on(async { tokio::time::timeout(timeout, request).await })
            .map_err(|_| McpError::Timeout {
                server: self.name.clone(),
                method: method.to_owned(),
                seconds: timeout.as_secs(),
            })
    }

    fn failed(&self, method: &str, e: &ServiceError) -> McpError {
        McpError::Failed {
            server: self.name.clone(),
            method: method.to_owned(),
            message: e.to_string(),
        }
    }
}
