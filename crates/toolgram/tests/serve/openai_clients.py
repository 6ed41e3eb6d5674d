"""The official `openai` SDK against `toolgram serve` (run by tests/serve.rs).

Usage: openai_clients.py BASE_URL API_KEY BFCL_DIR

Tool sets come from BFCL (shared test data written by others, never seen by the model's
prompt authors here), mapped to JSON Schema as BFCL maps its dialect. Every call the server
returns is checked with `jsonschema` against its tool's parameters.
"""

import json
import sys

import bfcl
import httpx
import jsonschema
import openai
from checks import check, passed

BASE, KEY, BFCL = sys.argv[1], sys.argv[2], sys.argv[3]
client = openai.OpenAI(base_url=BASE, api_key=KEY, max_retries=0, timeout=300)


def bfcl_tools(category, index):
    return bfcl.case(BFCL, category, index)


def valid_call(call, tools):
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    check(call.type == "function", f"a function call: {call}")
    check(call.function.name in schemas, f"a tool from the pool: {call.function.name}")
    args = json.loads(call.function.arguments)
    jsonschema.validate(args, schemas[call.function.name])
    check(call.id.startswith("call_"), f"an id: {call.id}")
    return args


def stream_calls(**kw):
    """Stream a chat completion; gather content and calls by index as OpenAI clients do."""
    calls, content, finish, first = {}, "", None, None
    for chunk in client.chat.completions.create(stream=True, **kw):
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        if first is None:
            first = choice.delta
        d = choice.delta
        if d.content:
            content += d.content
        for tc in d.tool_calls or []:
            if tc.index not in calls:
                check(tc.id and tc.function and tc.function.name, f"id and name in the first delta: {tc}")
                calls[tc.index] = {"id": tc.id, "name": tc.function.name, "arguments": tc.function.arguments or ""}
            else:
                check(tc.id is None, f"the id comes once: {tc}")
                calls[tc.index]["arguments"] += tc.function.arguments or ""
        if choice.finish_reason:
            finish = choice.finish_reason
    check(first is not None and first.role == "assistant", f"role first: {first}")
    return content, calls, finish


def chat_tool_choices():
    runs = {"all": 0, "cut": 0}
    for category, index in [("multiple", 3), ("multiple", 10), ("parallel_multiple", 0)]:
        question, tools = bfcl_tools(category, index)
        messages = [{"role": "user", "content": question}]
        names = [t["function"]["name"] for t in tools]
        choices = ["auto", "required", {"type": "function", "function": {"name": names[-1]}},
                   {"type": "allowed_tools", "allowed_tools": {"mode": "required",
                    "tools": [{"type": "function", "function": {"name": names[0]}}]}}]
        for choice in choices:
            r = client.chat.completions.create(model="toolgram", messages=messages, tools=tools,
                                               tool_choice=choice, parallel_tool_calls=False,
                                               max_tokens=160)
            msg = r.choices[0].message
            calls = msg.tool_calls or []
            runs["all"] += 1
            if r.choices[0].finish_reason == "length" and not msg.content:
                # The small test model ran a string on to max_tokens inside the call: cut,
                # and no half call returned.
                check(not calls, f"no half call: {msg}")
                runs["cut"] += 1
                continue
            if choice != "auto":
                check(len(calls) >= 1, f"{choice}: a call: {msg}")
                check(r.choices[0].finish_reason == "tool_calls", f"{choice}: finish_reason")
            for c in calls:
                valid_call(c, tools)
            if isinstance(choice, dict) and choice["type"] == "function":
                check(all(c.function.name == names[-1] for c in calls), f"named: {calls}")
            if isinstance(choice, dict) and choice["type"] == "allowed_tools":
                check(all(c.function.name == names[0] for c in calls), f"allowed: {calls}")
            check(not (msg.content or "").lstrip().startswith("{"), f"no call JSON in content: {msg.content!r}")
            # The same request streamed: calls by index, each valid. (Not compared with the
            # unstreamed reply: the second request reuses the cached prefix, and llama.cpp's
            # numerics differ with the batch shape, so a long greedy text may drift.)
            content, streamed, finish = stream_calls(model="toolgram", messages=messages, tools=tools,
                                                     tool_choice=choice, parallel_tool_calls=False,
                                                     max_tokens=160)
            check(sorted(streamed) == list(range(len(streamed))), f"indices 0..n: {sorted(streamed)}")
            for c in streamed.values():
                schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
                jsonschema.validate(json.loads(c["arguments"]), schemas[c["name"]])
            check(finish in ("tool_calls", "stop", "length"), f"finish {finish}")
            if choice != "auto" and finish != "length":
                check(streamed and finish == "tool_calls", f"{choice}: a streamed call")
            check("{\"name\"" not in content, f"no call markup in content: {content!r}")
    check(runs["cut"] * 2 < runs["all"], f"most runs end in a reply: {runs}")


def parallel_calls():
    question, tools = bfcl_tools("parallel", 0)
    r = client.chat.completions.create(model="toolgram", messages=[{"role": "user", "content": question}],
                                       tools=tools, tool_choice="required", parallel_tool_calls=True,
                                       max_tokens=200)
    calls = r.choices[0].message.tool_calls
    check(len(calls) >= 1, "calls")
    for c in calls:
        valid_call(c, tools)
    check(len({c.id for c in calls}) == len(calls), "distinct ids")
    _, streamed, _ = stream_calls(model="toolgram", messages=[{"role": "user", "content": question}],
                                  tools=tools, tool_choice="required", parallel_tool_calls=True,
                                  max_tokens=200)
    check(sorted(streamed) == list(range(len(streamed))), f"parallel calls by index 0..n: {sorted(streamed)}")
    check(len({c["id"] for c in streamed.values()}) == len(streamed), "distinct streamed ids")
    for c in streamed.values():
        schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
        jsonschema.validate(json.loads(c["arguments"]), schemas[c["name"]])


def multi_turn():
    _, tools = bfcl_tools("multiple", 3)
    messages = [{"role": "user", "content": "Distance between A(3,4) and B(1,2)?"}]
    r = client.chat.completions.create(model="toolgram", messages=messages, tools=tools,
                                       tool_choice="required", max_tokens=160)
    msg = r.choices[0].message
    call = msg.tool_calls[0]
    valid_call(call, tools)
    messages.append(msg.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "2.83"})
    r2 = client.chat.completions.create(model="toolgram", messages=messages, tools=tools,
                                        tool_choice="none", max_tokens=40)
    check(not r2.choices[0].message.tool_calls, "none: no call")
    check(r2.choices[0].finish_reason in ("stop", "length"), "a text reply")


def structured_output():
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
              "required": ["city", "country"], "additionalProperties": False}
    r = client.chat.completions.create(
        model="toolgram", messages=[{"role": "user", "content": "A city and its country, as JSON."}],
        response_format={"type": "json_schema", "json_schema": {"name": "place", "schema": schema, "strict": True}},
        max_tokens=60)
    jsonschema.validate(json.loads(r.choices[0].message.content), schema)


DICE = 'start: roll\nroll: COUNT "d" SIDES\nCOUNT: /[1-9]/\nSIDES: "4" | "6" | "8" | "20"\n'


def responses_api():
    tools = [{"type": "custom", "name": "roll_dice", "description": "Roll dice, e.g. 2d6.",
              "format": {"type": "grammar", "syntax": "lark", "definition": DICE}}]
    # One call each (the plan, on where several calls may be made, would count two dice).
    r = client.responses.create(model="toolgram", input="Roll two six-sided dice.", tools=tools,
                                tool_choice={"type": "custom", "name": "roll_dice"}, max_output_tokens=40,
                                parallel_tool_calls=False)
    items = [i for i in r.output if i.type == "custom_tool_call"]
    check(len(items) == 1, f"one custom call: {r.output}")
    import re
    check(re.fullmatch(r"[1-9]d(4|6|8|20)", items[0].input), f"input in the grammar: {items[0].input!r}")
    # Streamed, with the custom input delta and the completed response.
    kinds, inputs = [], ""
    with client.responses.stream(model="toolgram", input="Roll two six-sided dice.", tools=tools,
                                 tool_choice={"type": "custom", "name": "roll_dice"},
                                 max_output_tokens=40, parallel_tool_calls=False) as stream:
        for event in stream:
            kinds.append(event.type)
            if event.type == "response.custom_tool_call_input.delta":
                inputs += event.delta
        final = stream.get_final_response()
    check("response.created" in kinds and "response.completed" in kinds, f"events: {kinds}")
    check(re.fullmatch(r"[1-9]d(4|6|8|20)", inputs), f"streamed input: {inputs!r}")
    check(any(i.type == "custom_tool_call" for i in final.output), "final has the call")
    # The same tool as a regex grammar.
    rtool = [{"type": "custom", "name": "roll_dice", "description": "Roll dice, e.g. 2d6.",
              "format": {"type": "grammar", "syntax": "regex", "definition": "[1-9]d(4|6|8|20)"}}]
    r = client.responses.create(model="toolgram", input="Roll two six-sided dice.", tools=rtool,
                                tool_choice={"type": "custom", "name": "roll_dice"}, max_output_tokens=40,
                                parallel_tool_calls=False)
    items = [i for i in r.output if i.type == "custom_tool_call"]
    check(len(items) == 1 and re.fullmatch(r"[1-9]d(4|6|8|20)", items[0].input), f"regex tool: {r.output}")
    # Function tools, multi-turn through previous_response_id.
    question, ftools = bfcl_tools("multiple", 3)
    rtools = [{"type": "function", **t["function"]} for t in ftools]
    r1 = client.responses.create(model="toolgram", input=question, tools=rtools,
                                 tool_choice="required", max_output_tokens=160)
    calls = [i for i in r1.output if i.type == "function_call"]
    check(calls, f"a function call: {r1.output}")
    for c in calls:
        schema = next(t["parameters"] for t in rtools if t["name"] == c.name)
        jsonschema.validate(json.loads(c.arguments), schema)
    r2 = client.responses.create(model="toolgram", previous_response_id=r1.id, tools=rtools,
                                 tool_choice="none", max_output_tokens=30,
                                 input=[{"type": "function_call_output", "call_id": calls[0].call_id,
                                         "output": "2.83"}])
    check(r2.status in ("completed", "incomplete"), f"second turn: {r2.status}")
    check(not [i for i in r2.output if i.type == "function_call"], "none: no call")


# Raw bodies say what they are: the server answers any other Content-Type with a 415.
JSON = {"Content-Type": "application/json"}


def errors():
    raw = httpx.Client(base_url=BASE.removesuffix("/v1"), headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
    cases = [
        ("malformed JSON", raw.post("/v1/chat/completions", content=b"{not json", headers=JSON), 400, "invalid_json"),
        ("wrong type", raw.post("/v1/chat/completions", json={"messages": "hi"}), 400, "invalid_value"),
        ("n=2", raw.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}], "n": 2}), 400, "invalid_value"),
        # Any model name is served by the one model (--strict-model-names makes it a 404: serve.rs).
        ("unknown role", raw.post("/v1/chat/completions", json={"model": "gpt-9", "messages": [{"role": "wizard", "content": "x"}]}), 400, "invalid_value"),
        ("unknown named tool", raw.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}],
            "tool_choice": {"type": "function", "function": {"name": "b"}}}), 400, "invalid_request"),
        ("bad schema keyword", raw.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}],
            "strict_schemas": True, "tools": [{"type": "function", "function": {"name": "a", "parameters": {
                "type": "object", "properties": {"q": {"type": "string", "frobnicate": 3}}}}}]}), 400, "invalid_tools"),
        ("oversized", raw.post("/v1/chat/completions", content=b"[" + b" " * (5 << 20) + b"]", headers=JSON), 413, "request_too_large"),
        ("no API key", httpx.post(BASE + "/chat/completions", json={"messages": []}), 401, "invalid_api_key"),
    ]
    for what, resp, status, code in cases:
        body = resp.json()
        check(resp.status_code == status, f"{what}: status {resp.status_code} {body}")
        check(body["error"]["code"] == code, f"{what}: code {body}")
        check(isinstance(body["error"]["message"], str) and body["error"]["type"], f"{what}: shape {body}")
    bad = next(c for c in cases if c[0] == "bad schema keyword")[1].json()["error"]["message"]
    check("frobnicate" in bad and "/properties/q" in bad, f"names keyword and pointer: {bad}")
    # A generation cut inside a call: finish_reason length, no half call, not a 5xx.
    _, tools = bfcl_tools("multiple", 3)
    r = client.chat.completions.create(model="toolgram", messages=[{"role": "user", "content": "Distance A(3,4) B(1,2)"}],
                                       tools=tools, tool_choice="required", max_tokens=3)
    check(r.choices[0].finish_reason == "length" and not r.choices[0].message.tool_calls, f"cut: {r}")
    check(raw.get("/health").json()["status"] == "ok", "still serving")


def annotations():
    """BFCL's real schemas carry `"optional": true`, which OpenAI's API takes: an unknown
    keyword is an annotation, never enforced, listed in toolgram.warnings with its tool and
    pointer (the request's `strict_schemas` refuses it: errors())."""
    question, tools = bfcl.case(BFCL, "simple_python", 182, raw=True)
    check('"optional": true' in json.dumps(tools), f"BFCL's own schema: {tools}")
    r = client.chat.completions.create(model="toolgram", messages=[{"role": "user", "content": question}],
                                       tools=tools, tool_choice="required", max_tokens=120)
    warnings = r.model_extra["toolgram"]["warnings"]
    check(any("tool `lawsuit_info` at /properties/year: `optional`" in w for w in warnings), f"warnings: {warnings}")
    clean = json.loads(json.dumps(tools).replace('"optional": true, ', "").replace(', "optional": true', ""))
    for c in r.choices[0].message.tool_calls:
        valid_call(c, clean)


def runaway_calls():
    """Under OpenAI's default parallel_tool_calls, a reply ends with its calls (at most the
    server's --max-calls-per-reply, 8), never as a `length` cut of a model writing call after
    call."""
    for category, index in [("parallel", 0), ("parallel_multiple", 1)]:
        question, tools = bfcl_tools(category, index)
        r = client.chat.completions.create(model="toolgram", messages=[{"role": "user", "content": question}],
                                           tools=tools, tool_choice="required", max_tokens=900)
        choice = r.choices[0]
        calls = choice.message.tool_calls or []
        check(choice.finish_reason == "tool_calls", f"{category}: ends with its calls: {choice}")
        check(1 <= len(calls) <= 8, f"{category}: 1 to 8 calls: {len(calls)}")
        for c in calls:
            valid_call(c, tools)


def cut_call():
    """A call the limit cuts before it is complete: an empty text, no half call, and why in
    `toolgram.error`, streamed or not."""
    question, tools = bfcl_tools("parallel", 0)
    kw = dict(model="toolgram", messages=[{"role": "user", "content": question}], tools=tools,
              tool_choice="required", max_tokens=4)
    r = client.chat.completions.create(**kw)
    choice = r.choices[0]
    check(choice.finish_reason == "length" and not choice.message.tool_calls and choice.message.content == "",
          f"cut, no half call: {choice}")
    check(r.to_dict().get("toolgram", {}).get("error", {}).get("type") == "truncated", f"why: {r.to_dict()}")
    chunks = [c.to_dict() for c in client.chat.completions.create(stream=True, **kw)]
    last = [c for c in chunks if c.get("choices") and c["choices"][0].get("finish_reason")]
    check(len(last) == 1 and last[0]["choices"][0]["finish_reason"] == "length", f"streamed: {chunks}")
    check(not any(c["choices"][0]["delta"].get("tool_calls") for c in chunks if c.get("choices")),
          f"no half call streamed: {chunks}")
    why = last[0].get("toolgram", {}).get("error", {})
    check(why.get("type") == "truncated" and why.get("message"), f"why, streamed: {last[0]}")


def agents_sdk():
    """OpenAI's Agents SDK (a client written by others) runs its loop unchanged: it reads our
    call, runs its Python tool with the parsed arguments and ends on the tool's output."""
    import asyncio
    from agents import (Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, function_tool,
                        set_tracing_disabled)
    set_tracing_disabled(True)
    seen = []

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        seen.append(city)
        return f"sunny in {city}"

    model = OpenAIChatCompletionsModel(model="toolgram",
                                       openai_client=openai.AsyncOpenAI(base_url=BASE, api_key=KEY))
    agent = Agent(name="weather", instructions="Use the get_weather tool.", tools=[get_weather],
                  model=model, tool_use_behavior="stop_on_first_tool",
                  model_settings=ModelSettings(tool_choice="required", max_tokens=60))
    result = asyncio.run(Runner.run(agent, "What's the weather in Paris?", max_turns=2))
    check(len(seen) == 1 and isinstance(seen[0], str) and seen[0], f"the tool ran once: {seen}")
    check(result.final_output == f"sunny in {seen[0]}", f"final output: {result.final_output!r}")


for test in [chat_tool_choices, parallel_calls, multi_turn, structured_output, responses_api, annotations, runaway_calls,
             cut_call, agents_sdk, errors]:
    test()
    print(f"ok {test.__name__}", flush=True)
passed()
