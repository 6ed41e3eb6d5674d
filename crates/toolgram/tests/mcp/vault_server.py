"""An MCP server written with the official Python SDK (`mcp` 2.x, `MCPServer`), over stdio,
for tests/mcp.rs: a tool list that changes. `open_vault` takes itself out, adds `read_vault`,
and tells the client (`notifications/tools/list_changed`)."""

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("vault")


def read_vault() -> str:
    """Read what the opened vault holds."""
    return "the vault holds 3 gold bars"


@server.tool()
async def open_vault(ctx: Context) -> str:
    """Open the vault: afterwards it can be read."""
    server.remove_tool("open_vault")
    server.add_tool(read_vault)
    await ctx.session.send_tool_list_changed()
    return "the vault is open"


server.run()
