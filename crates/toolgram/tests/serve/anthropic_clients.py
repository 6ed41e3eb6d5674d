"""The official `anthropic` SDK against `toolgram serve`'s Messages API (run by tests/serve.rs).

Usage: anthropic_clients.py BASE_URL API_KEY BFCL_DIR [THINKING_BASE_URL]

Tools come from BFCL (shared data written by others) in Anthropic's shape; every `tool_use`
input is checked with `jsonschema` against its tool's `input_schema`. The model name is one a
client sends by default (`claude-sonnet-4-5`): the single-model server serves it. With a
fourth argument (a server whose chat template has a reasoning block) only thinking is checked,
there.
"""

import json
import sys
import warnings

import anthropic
import bfcl
import httpx
import jsonschema
from checks import check, passed

BASE, KEY, BFCL = sys.argv[1], sys.argv[2], sys.argv[3]
THINKING = sys.argv[4] if len(sys.argv) > 4 else None
warnings.filterwarnings("ignore", category=DeprecationWarning)  # the SDK on old model names
ROOT = BASE.removesuffix("/v1")
MODEL = "claude-sonnet-4-5"
client = anthropic.Anthropic(base_url=ROOT, api_key=KEY, max_retries=0, timeout=300)


def tools_of(category, index):
    question, tools = bfcl.case(BFCL, category, index)
    return question, [{"name": t["function"]["name"], "description": t["function"]["description"],
                       "input_schema": t["function"]["parameters"]} for t in tools]


def valid_tool_use(block, tools):
    schemas = {t["name"]: t["input_schema"] for t in tools}
    check(block.type == "tool_use", f"a tool_use block: {block}")
    check(block.name in schemas, f"a tool from the pool: {block.name}")
    check(isinstance(block.input, dict), f"input is an object: {block.input}")
    jsonschema.validate(block.input, schemas[block.name])
    check(block.id, f"an id: {block}")


def extra(msg):
    return msg.to_dict().get("toolgram", {})


def tool_choices():
    question, tools = tools_of("multiple", 3)
    names = [t["name"] for t in tools]
    messages = [{"role": "user", "content": question}]
    for choice in [{"type": "auto"}, {"type": "any"}, {"type": "tool", "name": names[-1]},
                   {"type": "none"}, {"type": "any", "disable_parallel_tool_use": True}]:
        kw = dict(model=MODEL, max_tokens=200, messages=messages, tools=tools, tool_choice=choice)
        msg = client.messages.create(**kw)
        check(msg.type == "message" and msg.role == "assistant", f"a message: {msg}")
        check(msg.model, "the reply names the model")
        uses = [b for b in msg.content if b.type == "tool_use"]
        for b in uses:
            valid_tool_use(b, tools)
        if choice["type"] in ("any", "tool"):
            check(msg.stop_reason == "tool_use" and uses, f"{choice}: a call: {msg}")
        if choice["type"] == "tool":
            check(all(b.name == names[-1] for b in uses), f"the named tool: {uses}")
        if choice.get("disable_parallel_tool_use"):
            check(len(uses) == 1, f"one call: {uses}")
        if choice["type"] == "none":
            check(not uses and msg.stop_reason in ("end_turn", "max_tokens"), f"no call: {msg}")
        check(msg.usage.input_tokens + (msg.usage.cache_read_input_tokens or 0) > 0, "usage")
        check(msg.usage.output_tokens > 0, "output tokens")
        # The same request streamed: the SDK's own accumulator rebuilds the same message as the
        # request after it gets (both find the whole prompt in the session cache; the first
        # did not, and a cached prefix may shift a greedy choice).
        with client.messages.stream(**kw) as stream:
            kinds = [e.type for e in stream]
            final = stream.get_final_message()
        msg = client.messages.create(**kw)
        check(kinds[0] == "message_start" and kinds[-1] == "message_stop", f"event order: {kinds}")
        check("message_delta" in kinds, f"a message_delta: {kinds}")
        check(final.stop_reason == msg.stop_reason, f"stop reason {final.stop_reason} vs {msg.stop_reason}")
        got = [(b.type, getattr(b, "name", None), getattr(b, "input", None), getattr(b, "text", None))
               for b in final.content]
        want = [(b.type, getattr(b, "name", None), getattr(b, "input", None), getattr(b, "text", None))
                for b in msg.content]
        check(got == want, f"{choice}: streamed {got} vs {want}")


def tool_result_loop():
    question, tools = tools_of("simple_python", 0)
    messages = [{"role": "user", "content": question}]
    msg = client.messages.create(model=MODEL, max_tokens=200, messages=messages, tools=tools,
                                 tool_choice={"type": "any"})
    use = next(b for b in msg.content if b.type == "tool_use")
    valid_tool_use(use, tools)
    messages += [{"role": "assistant", "content": [b.to_dict() for b in msg.content]},
                 {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": use.id, "content": [{"type": "text", "text": "42"}]},
                     {"type": "text", "text": "Thanks. Say the result in one sentence."}]}]
    again = client.messages.create(model=MODEL, max_tokens=60, messages=messages, tools=tools)
    check(again.stop_reason in ("end_turn", "tool_use", "max_tokens"), f"a second turn: {again}")
    # An error result, with the tool result's `is_error`.
    messages[-1] = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": use.id, "content": "timeout", "is_error": True}]}
    third = client.messages.create(model=MODEL, max_tokens=40, messages=messages, tools=tools)
    check(third.stop_reason in ("end_turn", "tool_use", "max_tokens"), f"after an error: {third}")


def server_tools_and_unknown_fields():
    question, tools = tools_of("simple_python", 1)
    hosted = [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
              {"type": "code_execution_20250522", "name": "code_execution"}]
    msg = client.beta.messages.create(  # the ?beta=true route Claude Code uses
        model=MODEL, max_tokens=150, messages=[
            {"role": "user", "content": question},
            # Claude Code sends its environment as a system message among the others.
            {"role": "system", "content": [{"type": "text", "text": "Working directory: /tmp"}]}],
        tools=tools + hosted, tool_choice={"type": "any"},
        system=[{"type": "text", "text": "You call tools.", "cache_control": {"type": "ephemeral"}}],
        metadata={"user_id": "u-1"}, stop_sequences=["\n\n\n"], betas=["context-management-2025-06-27"],
        extra_body={"context_management": {"edits": []}, "no_such_field": 1, "top_k": 5, "temperature": 0.0})
    t = extra(msg)
    out = {f["tool"] for f in t.get("filtered_out", [])}
    check({"web_search", "code_execution"} <= out, f"server tools listed: {t}")
    check(any("no_such_field" in n for n in t.get("notes", [])), f"the unknown field is said: {t}")
    check(any("top_k" in n for n in t.get("notes", [])), f"top_k said: {t}")
    check(not any("context_management" in n for n in t.get("notes", [])), f"accepted silently: {t}")
    uses = [b for b in msg.content if b.type == "tool_use"]
    check(uses and all(b.name == tools[0]["name"] for b in uses), f"only the client tool: {msg}")
    # A max_tokens above the server's limit is capped, not refused.
    big = client.messages.create(model=MODEL, max_tokens=64000, messages=[{"role": "user", "content": "Hi"}])
    check(any("capped" in n for n in extra(big).get("notes", [])), f"capped: {extra(big)}")


def count_tokens():
    question, tools = tools_of("multiple", 10)
    kw = dict(model=MODEL, messages=[{"role": "user", "content": question}], tools=tools,
              tool_choice={"type": "none"})
    n = client.messages.count_tokens(**kw).input_tokens
    msg = client.messages.create(max_tokens=3, **kw)
    used = msg.usage.input_tokens + (msg.usage.cache_read_input_tokens or 0)
    check(n == used, f"count_tokens {n} == the reply's prompt tokens {used}")
    bare = client.messages.count_tokens(model=MODEL, messages=kw["messages"]).input_tokens
    check(0 < bare < n, f"the tools count: {bare} without, {n} with")


def cut_call():
    """A call the limit cuts before it is complete: no half call, and why, streamed or not."""
    question, tools = tools_of("multiple", 3)
    kw = dict(model=MODEL, max_tokens=4, messages=[{"role": "user", "content": question}], tools=tools,
              tool_choice={"type": "any"})
    msg = client.messages.create(**kw)
    check(msg.stop_reason == "max_tokens" and not [b for b in msg.content if b.type == "tool_use"],
          f"cut, no half call: {msg}")
    check(extra(msg).get("error", {}).get("type") == "truncated", f"why, in toolgram: {extra(msg)}")
    deltas = [e.to_dict() for e in client.messages.create(stream=True, **kw) if e.type == "message_delta"]
    check(len(deltas) == 1 and deltas[0]["delta"]["stop_reason"] == "max_tokens", f"streamed: {deltas}")
    why = deltas[0].get("toolgram", {}).get("error", {})
    check(why.get("type") == "truncated" and why.get("message"), f"why, streamed: {deltas[0]}")
    plain = [e.to_dict() for e in client.messages.create(
        stream=True, model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "Hi"}])
        if e.type == "message_delta"]
    check("notes" in plain[0].get("toolgram", {}), f"a streamed reply's toolgram object: {plain}")


def errors():
    wrong = anthropic.Anthropic(base_url=ROOT, api_key="wrong", max_retries=0)
    try:
        wrong.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
        check(False, "a wrong key is refused")
    except anthropic.AuthenticationError as e:
        check(e.body["error"]["type"] == "authentication_error", f"error shape: {e.body}")
    bearer = httpx.post(f"{ROOT}/v1/messages", headers={"Authorization": f"bearer {KEY}"},
                        json={"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}]},
                        timeout=300)
    check(bearer.status_code == 200, f"Authorization: bearer works too: {bearer.text}")
    for bad, field in [({"role": "wizard", "content": "x"}, "messages[0]"),
                       ({"role": "user", "content": 5}, "messages[0].content")]:
        try:
            client.messages.create(model=MODEL, max_tokens=10, messages=[bad])
            check(False, f"{bad} is refused")
        except anthropic.BadRequestError as e:
            check(e.body["type"] == "error" and e.body["error"]["type"] == "invalid_request_error",
                  f"error shape: {e.body}")
            check(field in e.body["error"]["message"] or e.body["error"].get("param") == field,
                  f"names {field}: {e.body}")
    try:
        client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "Hi"}],
                               tools=[{"name": "f", "input_schema": {"type": "object", "properties": {
                                   "a": {"type": "strnig"}}}}])
        check(False, "a bad schema is refused")
    except anthropic.BadRequestError as e:
        check("tools" in json.dumps(e.body), f"names the tools: {e.body}")


def thinking():
    if THINKING is None:
        # This server's template has no reasoning block: thinking is ignored, and said.
        msg = client.messages.create(model=MODEL, max_tokens=20, messages=[{"role": "user", "content": "Hi"}],
                                     thinking={"type": "enabled", "budget_tokens": 1024})
        check(any("thinking" in n for n in extra(msg).get("notes", [])), f"said: {extra(msg)}")
        check(all(b.type != "thinking" for b in msg.content), f"no thinking block: {msg}")
        return
    c = anthropic.Anthropic(base_url=THINKING.removesuffix("/v1"), api_key=KEY, max_retries=0, timeout=300)
    question, tools = tools_of("simple_python", 2)
    kw = dict(model="claude-opus-4-1", max_tokens=160, messages=[{"role": "user", "content": question}],
              tools=tools, thinking={"type": "enabled", "budget_tokens": 48})
    msg = c.messages.create(**kw)
    blocks = [b.type for b in msg.content]
    check(blocks and blocks[0] == "thinking" and msg.content[0].thinking.strip(), f"thinking first: {msg}")
    check(msg.content[0].signature, "a signature to send back")
    with c.messages.stream(**kw) as stream:
        deltas = [e.delta.type for e in stream if e.type == "content_block_delta"]
        final = stream.get_final_message()
    check("thinking_delta" in deltas and "signature_delta" in deltas, f"thinking deltas: {deltas}")
    check(final.content[0].type == "thinking" and final.content[0].thinking == msg.content[0].thinking,
          f"streamed thinking {final.content[0]} vs {msg.content[0]}")
    # The thinking block goes back in the history, as Claude Code sends it.
    history = [{"role": "user", "content": question},
               {"role": "assistant", "content": [b.to_dict() for b in msg.content]}]
    uses = [b for b in msg.content if b.type == "tool_use"]
    if uses:
        history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id, "content": "ok"}]})
    else:
        history.append({"role": "user", "content": "Go on."})
    again = c.messages.create(model="claude-opus-4-1", max_tokens=80, messages=history, tools=tools,
                              thinking={"type": "enabled", "budget_tokens": 32})
    check(again.content, f"a reply after thinking history: {again}")


# With a reasoning server, only thinking is checked there; the rest once, on the plain one.
tests = [thinking] if THINKING else [tool_choices, tool_result_loop, server_tools_and_unknown_fields,
                                     count_tokens, cut_call, errors, thinking]
for test in tests:
    test()
    print(f"ok {test.__name__}", flush=True)
passed()
