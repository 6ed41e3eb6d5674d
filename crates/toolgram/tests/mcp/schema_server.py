"""An MCP server on the official Python SDK's low-level `Server` (which, unlike `MCPServer`,
does not check its own output), over stdio, for tests/mcp.rs: `forecast` declares an
`outputSchema` its result breaks (`celsius` as a string); `refuse` answers with a JSON-RPC
error."""

import asyncio

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

OUTPUT = {
    "type": "object",
    "properties": {"celsius": {"type": "number"}},
    "required": ["celsius"],
}


async def list_tools(ctx, params):
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name="forecast",
                description="Tomorrow's temperature.",
                input_schema={"type": "object", "properties": {}},
                output_schema=OUTPUT,
            ),
            types.Tool(
                name="refuse",
                description="Always refused.",
                input_schema={"type": "object", "properties": {}},
            ),
        ]
    )


async def call_tool(ctx, params):
    if params.name == "refuse":
        raise MCPError(-32602, "refuse takes no calls today")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="warm")],
        structured_content={"celsius": "warm"},
    )


server = Server("schema", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


asyncio.run(main())
