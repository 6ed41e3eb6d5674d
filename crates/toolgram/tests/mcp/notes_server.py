"""An MCP server written with the official Python SDK (`mcp` 2.x, `MCPServer`), over stdio —
or over streamable HTTP at http://127.0.0.1:PORT/mcp with `--http PORT` — for tests/mcp.rs:
notes kept as files in the folder given as its argument. `write_note` writes one;
`read_note` fails (`isError`) for a note that does not exist."""

import pathlib
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

ROOT = pathlib.Path(sys.argv[1])
server = MCPServer("notes")


@server.tool()
def write_note(name: str, text: str) -> str:
    """Write a note: a file called `name` in the notes folder, containing `text`."""
    path = ROOT / pathlib.Path(name).name
    path.write_text(text)
    return f"wrote {len(text)} characters to {path.name}"


@server.tool()
def read_note(name: str) -> str:
    """Read the note called `name`."""
    path = ROOT / pathlib.Path(name).name
    if not path.exists():
        # A ToolError's message reaches the client (other exceptions are masked).
        raise ToolError(f"there is no note called {name}")
    return path.read_text()


if "--http" in sys.argv:
    port = int(sys.argv[sys.argv.index("--http") + 1])
    server.run(transport="streamable-http", host="127.0.0.1", port=port)
else:
    server.run()
