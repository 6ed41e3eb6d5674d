"""`toolgram serve --mcp notes=NOTES_SERVER` driven by the official SDKs, for tests/mcp.rs:
the OpenAI SDK's Responses `mcp` tool (no approval, streamed and not; approval asked, then
given in the next request) and the Anthropic SDK's MCP connector (`mcp_servers` with an
`mcp_toolset`, beta `mcp-client-2025-11-20`, streamed and not). Each must write its note
through the server-side loop. A URL a request names (and a server nobody declared) must
never be reached: a listener here counts connections and must see none.

Usage: mcp_clients.py BASE_URL NOTES_DIR
"""

import json
import pathlib
import socket
import sys
import threading

import anthropic
import openai

BASE, NOTES = sys.argv[1], pathlib.Path(sys.argv[2])
ROOT = BASE.removesuffix("/v1")


class Listener:
    """A TCP port that counts the connections made to it."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            conn, _ = self.sock.accept()
            self.connections += 1
            conn.close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/mcp"


trap = Listener()
oai = openai.OpenAI(base_url=BASE, api_key="k", timeout=600)


def written(name, response):
    path = NOTES / name
    assert path.exists(), f"{name} not written; the response: {response}"
    return path.read_text()


def calls_of(output):
    return [i for i in output if i.type == "mcp_call"]


# One call a reply: with parallel calls on, the default model follows its write with another
# (the same note, a newline more) until its token limit (docs/mcp.md).
ONE = {"parallel_tool_calls": False}


def prompt(name, text):
    return f"Write a note named {name} containing {text}"


# 1. Responses, no approval: the loop runs on the server; the reply lists the tools and the
# call, then answers. The declared label is used; the URL sent with it is never reached.
notes_tool = {"type": "mcp", "server_label": "notes", "server_url": trap.url,
              "require_approval": "never"}
r = oai.responses.create(model="default", input=prompt("plain.txt", "hello world"),
                         tools=[notes_tool], tool_choice="required", **ONE)
kinds = [i.type for i in r.output]
assert kinds[0] == "mcp_list_tools", kinds
listed = {t.name for t in r.output[0].tools}
assert {"write_note", "read_note"} <= listed, listed
calls = calls_of(r.output)
assert calls and calls[0].name == "write_note", kinds
assert calls[0].server_label == "notes"
assert calls[0].output and calls[0].output.startswith("wrote"), calls[0]
assert calls[0].error is None
assert isinstance(calls[0].arguments, str)
written(pathlib.Path(json.loads(calls[0].arguments)["name"]).name, r)
print("responses: ok", kinds)

# 2. Streamed: the list and the call arrive as their own events, the final object holds them.
events = []
final = None
with oai.responses.stream(model="default", input=prompt("streamed.txt", "streamed text"),
                          tools=[notes_tool], tool_choice="required", **ONE) as s:
    for e in s:
        events.append(e.type)
    final = s.get_final_response()
for kind in ["response.mcp_list_tools.completed", "response.mcp_call.in_progress",
             "response.mcp_call_arguments.done", "response.mcp_call.completed",
             "response.completed"]:
    assert kind in events, (kind, events)
assert calls_of(final.output), [i.type for i in final.output]
print("responses stream: ok", len(events), "events")

# 3. Approval asked (OpenAI's default): the call waits, nothing is written; approved in the
# next request (previous_response_id), it runs.
asking = {"type": "mcp", "server_label": "notes"}
r1 = oai.responses.create(model="default", input=prompt("approved.txt", "approved text"),
                          tools=[asking], tool_choice="required", **ONE)
requests = [i for i in r1.output if i.type == "mcp_approval_request"]
assert requests, [i.type for i in r1.output]
assert requests[0].name == "write_note" and requests[0].server_label == "notes"
assert not calls_of(r1.output)
assert not list(NOTES.glob("approved*")), "written before it was approved"
r2 = oai.responses.create(model="default", previous_response_id=r1.id, tools=[asking], **ONE,
                          input=[{"type": "mcp_approval_response", "approve": True,
                                  "approval_request_id": requests[0].id}])
calls = calls_of(r2.output)
assert calls and calls[0].name == "write_note", [i.type for i in r2.output]
# The call that ran names the request it answers (so a client replaying items ties them).
assert calls[0].approval_request_id == requests[0].id, calls[0]
name = json.loads(requests[0].arguments)["name"]
written(pathlib.Path(name).name, r2)
print("responses approval: ok")

# 4. A server nobody declared: left out and said, never reached.
r = oai.responses.create(model="default", input="Say hi.",
                         tools=[{"type": "mcp", "server_label": "elsewhere",
                                 "server_url": trap.url, "require_approval": "never"}])
left = r.model_extra["toolgram"]["filtered_out"]
assert any(f["tool"] == "elsewhere" for f in left), left
print("undeclared: ok")

# 5. Anthropic's MCP connector: the server named `notes` is the declared one; its URL is not
# reached. Streamed and not.
claude = anthropic.Anthropic(base_url=ROOT, api_key="k", timeout=600)
connector = dict(
    model="default", max_tokens=512,
    mcp_servers=[{"type": "url", "url": trap.url, "name": "notes"}],
    tools=[{"type": "mcp_toolset", "mcp_server_name": "notes"}],
    tool_choice={"type": "any", "disable_parallel_tool_use": True},
    betas=["mcp-client-2025-11-20"])
m = claude.beta.messages.create(
    messages=[{"role": "user", "content": prompt("claude.txt", "from claude")}], **connector)
types = [b.type for b in m.content]
uses = [b for b in m.content if b.type == "mcp_tool_use"]
results = [b for b in m.content if b.type == "mcp_tool_result"]
assert uses and uses[0].name == "write_note" and uses[0].server_name == "notes", types
assert results and results[0].tool_use_id == uses[0].id and not results[0].is_error, types
written(pathlib.Path(uses[0].input["name"]).name, m)
print("anthropic: ok", types)

with claude.beta.messages.stream(
        messages=[{"role": "user", "content": prompt("claude-stream.txt", "streamed")}],
        **connector) as s:
    m = s.get_final_message()
uses = [b for b in m.content if b.type == "mcp_tool_use"]
assert uses and uses[0].input.get("name"), [b.type for b in m.content]
assert any(b.type == "mcp_tool_result" for b in m.content)
written(pathlib.Path(uses[0].input["name"]).name, m)
print("anthropic stream: ok")

assert trap.connections == 0, f"a URL from a request was reached {trap.connections} times"
print("no URL reached: ok")
