//! What can go wrong with an MCP server, each naming the server. Types only: this module must
//! not talk to a server.

/// An MCP server that could not give what was asked.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The server's declaration cannot be used (an empty command line, a transport not
    /// supported yet).
    #[error("MCP server `{server}`: {message}")]
    Declaration {
        /// The server as declared.
        server: String,
        /// Why.
        message: String,
    },
    /// The server could not be started or did not complete `initialize`.
    #[error("MCP server `{server}` did not start: {message}")]
    Start {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// The server did not answer within the timeout.
    #[error("MCP server `{server}` did not answer `{method}` within {seconds} s")]
    Timeout {
        /// The server.
        server: String,
        /// The request it did not answer.
        method: String,
        /// The timeout.
        seconds: u64,
    },
    /// The server answered with an error, or its connection ended (it exited).
    #[error("MCP server `{server}` failed `{method}`: {message}")]
    Failed {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// Its error.
        message: String,
    },
    /// The server refused one call with a JSON-RPC error (arguments it does not take, a tool
    /// it no longer has): the call's answer, which the tool loop shows the model.
    #[error("MCP server `{server}` refused the call: {message}")]
    Refused {
        /// The server.
        server: String,
        /// Its error.
        message: String,
    },
    /// A tool the server listed cannot be offered (its schema, or a name another server
    /// already gave).
    #[error("MCP server `{server}` lists a tool that cannot be offered: {message}")]
    Tool {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// No server lists the tool.
    #[error("no MCP server lists the tool `{0}`")]
    UnknownTool(String),
}
