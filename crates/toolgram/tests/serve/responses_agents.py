"""The `openai` SDK on the Responses API with the request shapes coding agents send (run by
tests/serve.rs): `namespace` tool groups, hosted tools, `reasoning`, `include`, `store: false`,
`developer` messages, `prompt_cache_key`, `client_metadata`, a custom Lark tool with the
`apply_patch` grammar a coding agent sends (tests/serve/data/apply_patch.lark, verbatim), a
1-token probe and an oversized `max_output_tokens`, streamed and not, checked event by event.

Usage: responses_agents.py BASE_URL API_KEY BFCL_DIR [THINKING_BASE_URL]
"""

import json
import os
import re
import sys

import bfcl
import httpx
import jsonschema
import openai
from checks import check, passed

BASE, KEY, BFCL = sys.argv[1], sys.argv[2], sys.argv[3]
THINKING = sys.argv[4] if len(sys.argv) > 4 else None
MODEL = "gpt-5-codex"  # a name the server does not serve by that name: it serves it anyway
client = openai.OpenAI(base_url=BASE, api_key=KEY, max_retries=0, timeout=300)
GRAMMAR = open(os.path.join(os.path.dirname(__file__), "data", "apply_patch.lark")).read()
APPLY_PATCH = {"type": "custom", "name": "apply_patch",
               "description": "Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.",
               "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR}}
HOSTED = [{"type": "web_search", "external_web_access": False}, {"type": "tool_search", "execution": "client"},
          {"type": "local_shell"}, {"type": "image_generation", "output_format": "png"},
          {"type": "file_search", "vector_store_ids": ["vs_1"]}]
# What a coding agent sends besides tools and input.
AGENT_FIELDS = dict(store=False, stream=False, include=["reasoning.encrypted_content"],
                    reasoning={"effort": "medium", "summary": "auto"}, parallel_tool_calls=False,
                    prompt_cache_key="conv-1", text={"verbosity": "low"}, truncation="auto",
                    service_tier="auto", user="dev")
EXTRA = {"client_metadata": {"originator": "agent"}}


def d(obj):
    return obj.to_dict() if hasattr(obj, "to_dict") else obj


def events_of(c=None, **kw):
    """Every event of a streamed response, checked for order and sequence numbers."""
    events = [d(e) for e in (c or client).responses.create(stream=True, **kw)]
    seqs = [e["sequence_number"] for e in events]
    check(seqs == list(range(len(seqs))), f"sequence numbers 0..n: {seqs}")
    kinds = [e["type"] for e in events]
    check(kinds[:2] == ["response.created", "response.in_progress"], f"created first: {kinds[:3]}")
    check(kinds[-1] in ("response.completed", "response.incomplete"), f"completed last: {kinds[-1]}")
    added = [e["output_index"] for e in events if e["type"] == "response.output_item.added"]
    done = [e["output_index"] for e in events if e["type"] == "response.output_item.done"]
    check(added == done == list(range(len(added))), f"items added and done in order: {added} {done}")
    final = events[-1]["response"]
    check(final["usage"] and final["usage"]["output_tokens"] > 0, f"usage in the last event: {final}")
    check([i["id"] for i in final["output"]] ==
          [e["item"]["id"] for e in events if e["type"] == "response.output_item.done"],
          "the final output is the items done")
    return events, final


def namespaces_and_hosted_tools():
    question, tools = bfcl.case(BFCL, "multiple", 3)
    functions = [{"type": "function", **t["function"]} for t in tools]
    ns = {"type": "namespace", "name": "mcp__bfcl", "description": "Tools in the mcp__bfcl namespace.",
          "tools": functions[1:]}
    kw = dict(model=MODEL, instructions="You are a coding agent.",
              input=[{"role": "developer", "content": "Call tools when they help."},
                     {"type": "message", "role": "user", "content": [{"type": "input_text", "text": question}]}],
              tools=[functions[0], ns, APPLY_PATCH] + HOSTED,
              tool_choice={"type": "function", "name": functions[-1]["name"]}, extra_body=EXTRA,
              **AGENT_FIELDS)
    r = d(client.responses.create(**kw))
    check(r["status"] == "completed" and r["model"], f"completed: {r}")
    calls = [i for i in r["output"] if i["type"] == "function_call"]
    check(calls and calls[0]["name"] == functions[-1]["name"], f"the named call: {r['output']}")
    check(calls[0].get("namespace") == "mcp__bfcl", f"the call names its namespace: {calls[0]}")
    jsonschema.validate(json.loads(calls[0]["arguments"]), functions[-1]["parameters"])
    out = {f["tool"] for f in r["toolgram"]["filtered_out"]}
    check({"web_search", "tool_search", "local_shell", "image_generation", "file_search"} <= out,
          f"hosted tools listed: {r['toolgram']['filtered_out']}")
    check(all(f["reason"] for f in r["toolgram"]["filtered_out"]), "each with a reason")
    kw["stream"] = True
    kw.pop("store")
    events, final = events_of(store=False, **{k: v for k, v in kw.items() if k != "stream"})
    items = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    check(any(i.get("namespace") == "mcp__bfcl" for i in items), f"namespace when the item opens: {items}")
    args = "".join(e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta")
    check(json.loads(args) == json.loads(calls[0]["arguments"]), f"streamed arguments: {args}")
    # The call and its output go back as a coding agent sends them; the turn goes on.
    follow = [{"role": "user", "content": question}, {k: calls[0][k] for k in
              ("type", "call_id", "name", "arguments", "namespace")},
              {"type": "function_call_output", "call_id": calls[0]["call_id"], "output": "done"},
              {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}}]
    r2 = d(client.responses.create(model=MODEL, input=follow, tools=[functions[0], ns] + HOSTED,
                                   max_output_tokens=40, store=False))
    check(r2["status"] in ("completed", "incomplete"), f"a second turn: {r2}")
    check(any("web_search_call" in n for n in r2["toolgram"]["notes"]), f"the hosted item said: {r2['toolgram']}")


def apply_patch():
    kw = dict(model=MODEL, input="Use apply_patch to add a file hello.txt with one line: hi",
              tools=[APPLY_PATCH], tool_choice={"type": "custom", "name": "apply_patch"},
              max_output_tokens=400, **{k: v for k, v in AGENT_FIELDS.items() if k != "stream"})
    r = d(client.responses.create(**kw))
    calls = [i for i in r["output"] if i["type"] == "custom_tool_call"]
    check(calls, f"a custom tool call: {r}")
    patch = calls[0]["input"]
    check(patch.startswith("*** Begin Patch\n") and re.search(r"\*\*\* End Patch\n?$", patch),
          f"a whole patch in the grammar: {patch!r}")
    check(re.search(r"^\*\*\* (Add|Delete|Update) File: ", patch, re.M), f"a hunk: {patch!r}")
    events, final = events_of(**kw)
    kinds = [e["type"] for e in events]
    check("response.custom_tool_call_input.delta" in kinds and "response.custom_tool_call_input.done" in kinds,
          f"custom tool input events: {kinds}")
    streamed = "".join(e["delta"] for e in events if e["type"] == "response.custom_tool_call_input.delta")
    check(streamed == patch, f"streamed input {streamed!r} == {patch!r}")


def probes_and_limits():
    r = d(client.responses.create(model=MODEL, input="Say hello.", max_output_tokens=1))
    check(r["usage"]["output_tokens"] == 1, f"a 1-token reply: {r}")
    check(r["status"] == "incomplete" and r["incomplete_details"]["reason"] == "max_output_tokens", f"{r}")
    # A call the limit cuts before it is complete: no half call, and why, streamed or not.
    weather = [{"type": "function", "name": "get_weather", "description": "A city's weather.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]}}]
    cut = dict(model=MODEL, input="The weather in Paris?", tools=weather, tool_choice="required",
               max_output_tokens=4)
    r = d(client.responses.create(**cut))
    check(r["status"] == "incomplete" and r["output"] == [], f"cut, no half call: {r}")
    check(r["toolgram"].get("error", {}).get("type") == "truncated", f"why, in toolgram: {r['toolgram']}")
    _, final = events_of(**cut)
    check(final["status"] == "incomplete" and final["output"] == [], f"cut, streamed: {final}")
    check(final["toolgram"].get("error", {}).get("type") == "truncated", f"why, streamed: {final}")
    r = d(client.responses.create(model=MODEL, input="Say hello.", max_output_tokens=10 ** 6))
    check(any("capped" in n for n in r["toolgram"]["notes"]), f"capped, said: {r['toolgram']}")
    r = d(client.responses.create(model=MODEL, input="Hi", max_output_tokens=8, reasoning={"effort": "high"}))
    check(any("reasoning" in n for n in r["toolgram"]["notes"]), f"reasoning ignored, said: {r['toolgram']}")
    models = client.models.list()
    check(len(models.data) >= 1, "a model is listed")
    bad = httpx.post(f"{BASE}/chat/completions", headers={"Authorization": f"Bearer {KEY}"},
                     json={"model": "gpt-4o", "messages": [{"role": "wizard", "content": "Hi"}]}, timeout=60)
    check(bad.status_code == 400 and "role" in bad.text, f"an unknown role is a 400: {bad.text}")
    dev = client.chat.completions.create(model="gpt-4o", max_tokens=5,
                                         messages=[{"role": "developer", "content": "Be brief."},
                                                   {"role": "user", "content": "Hi"}])
    check(dev.choices[0].message.role == "assistant", "developer is a system message")


def reasoning_items():
    if THINKING is None:
        return
    c = openai.OpenAI(base_url=THINKING, api_key=KEY, max_retries=0, timeout=300)
    kw = dict(model=MODEL, input="What is 17 * 3? Answer with the number.", max_output_tokens=120,
              reasoning={"effort": "low"}, include=["reasoning.encrypted_content"], store=False)
    r = d(c.responses.create(**kw))
    items = [i for i in r["output"] if i["type"] == "reasoning"]
    check(items and items[0]["content"][0]["text"].strip(), f"a reasoning item first: {r['output']}")
    check(items[0]["encrypted_content"], f"encrypted_content when asked: {items[0]}")
    back = d(c.responses.create(model=MODEL, max_output_tokens=20, store=False, input=[
        {"role": "user", "content": kw["input"]},
        {"type": "reasoning", "id": items[0]["id"], "summary": [], "encrypted_content": items[0]["encrypted_content"]},
        *[i for i in r["output"] if i["type"] == "message"],
        {"role": "user", "content": "And 17 * 4?"}]))
    check(back["status"] in ("completed", "incomplete"), f"reasoning items accepted back: {back}")
    events, final = events_of(c, model=MODEL, input="What is 2 + 2?", max_output_tokens=60,
                              reasoning={"effort": "low"}, store=False)
    kinds = [e["type"] for e in events]
    check("response.reasoning_text.delta" in kinds, f"reasoning streamed: {kinds}")
    check(final["output"][0]["type"] == "reasoning" and "encrypted_content" not in final["output"][0],
          f"no encrypted_content unless asked: {final['output'][0]}")


namespaces_and_hosted_tools()
apply_patch()
probes_and_limits()
reasoning_items()
passed()
