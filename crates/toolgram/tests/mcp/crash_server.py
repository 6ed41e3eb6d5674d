"""An MCP server written with the official Python SDK (`mcp` 2.x, `MCPServer`), over stdio,
for tests/mcp.rs: `crash` makes the server exit without answering."""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("crash")


@server.tool()
def crash() -> str:
    """Stop the server at once."""
    os._exit(3)


server.run()
