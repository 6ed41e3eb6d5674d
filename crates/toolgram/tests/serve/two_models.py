"""Two models in one `toolgram serve`, picked by name, through the official `openai` and
`anthropic` SDKs (run by tests/serve.rs).

Usage: two_models.py BASE_URL FIRST_ID FIRST_NAME SECOND_ID SECOND_NAME

The server serves FIRST (loaded at start) and SECOND under `--max-loaded 1`. Each model is
asked by its id and by the name it was given (`--model NAME`) on Chat Completions, Responses
and Anthropic Messages, streamed and not, from four clients at once in an order that
alternates the models; every reply must name the model that was asked for and make a valid
call. Then `/v1/models` lists both, `/health` shows one loaded, and `/metrics` counts each
model's loads, unloads and replies.
"""

import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor

import anthropic
import httpx
import jsonschema
import openai
from checks import check, passed

BASE, FIRST, FIRST_NAME, SECOND, SECOND_NAME = sys.argv[1:6]
ROOT = BASE.removesuffix("/v1")
oa = openai.OpenAI(base_url=BASE, api_key="k", max_retries=0, timeout=300)
an = anthropic.Anthropic(base_url=ROOT, api_key="k", max_retries=0, timeout=300)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
          "additionalProperties": False}
ASK = "What is the weather in Paris?"
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                                "parameters": SCHEMA}}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "description": "Weather in a city",
                    "parameters": SCHEMA}]
MESSAGES_TOOLS = [{"name": "get_weather", "description": "Weather in a city", "input_schema": SCHEMA}]


def valid(name, arguments):
    check(name == "get_weather", f"a call to get_weather: {name}")
    jsonschema.validate(arguments, SCHEMA)


def chat(model, stream):
    args = dict(model=model, messages=[{"role": "user", "content": ASK}], tools=CHAT_TOOLS,
                tool_choice="required", max_tokens=64)
    if not stream:
        r = oa.chat.completions.create(**args)
        call = r.choices[0].message.tool_calls[0].function
        return r.model, call.name, json.loads(call.arguments)
    names, name, text = set(), None, ""
    for chunk in oa.chat.completions.create(stream=True, **args):
        names.add(chunk.model)
        for d in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            name = d.function.name or name
            text += d.function.arguments or ""
    check(len(names) == 1, f"every chunk names one model: {names}")
    return names.pop(), name, json.loads(text)


def responses(model, stream):
    args = dict(model=model, input=ASK, tools=RESPONSES_TOOLS, tool_choice="required",
                max_output_tokens=64)
    if not stream:
        r = oa.responses.create(**args)
    else:
        r = None
        for event in oa.responses.create(stream=True, **args):
            if event.type == "response.completed":
                r = event.response
        check(r is not None, "a response.completed event")
    call = next(o for o in r.output if o.type == "function_call")
    return r.model, call.name, json.loads(call.arguments)


def messages(model, stream):
    args = dict(model=model, max_tokens=64, messages=[{"role": "user", "content": ASK}],
                tools=MESSAGES_TOOLS, tool_choice={"type": "any"})
    if not stream:
        m = an.messages.create(**args)
    else:
        with an.messages.stream(**args) as s:
            m = s.get_final_message()
    use = next(b for b in m.content if b.type == "tool_use")
    return m.model, use.name, use.input


def ask(job):
    api, model, expected, stream = job
    got, name, arguments = {"chat": chat, "responses": responses, "messages": messages}[api](model, stream)
    check(got == expected, f"{api} asked for `{model}` (stream={stream}): the reply names `{got}`")
    valid(name, arguments)
    return expected


def metrics():
    text = httpx.get(f"{ROOT}/metrics", timeout=60).text
    return {(m[0], m[1]): float(m[2]) for m in
            re.findall(r'^(toolgram_model_\w+)\{model="([^"]+)"\} (\S+)$', text, re.M)}


# A switch each way first, one request at a time: SECOND loads, FIRST is unloaded, and back.
ask(("chat", SECOND_NAME, SECOND, True))
ask(("messages", FIRST, FIRST, False))
m = metrics()
check(m[("toolgram_model_loads_total", SECOND)] == 1, f"{SECOND} loaded once: {m}")
check(m[("toolgram_model_loads_total", FIRST)] == 2, f"{FIRST} loaded twice: {m}")
check(m[("toolgram_model_unloads_total", FIRST)] == 1, f"{FIRST} unloaded once: {m}")
check(m[("toolgram_model_load_seconds", SECOND)] > 0, f"a load time: {m}")

# Then interleaved: every API, both models by id and by name, streamed and not, four at once.
jobs = []
for api in ("chat", "responses", "messages"):
    for stream in (False, True):
        jobs += [(api, FIRST_NAME if stream else FIRST, FIRST, stream),
                 (api, SECOND if stream else SECOND_NAME, SECOND, stream)]
with ThreadPoolExecutor(4) as pool:
    answered = list(pool.map(ask, jobs))
check(answered.count(FIRST) == 6 and answered.count(SECOND) == 6, f"answers: {answered}")

listed = [d.id for d in oa.models.list().data]
for name in (FIRST, SECOND, FIRST_NAME, SECOND_NAME):
    check(name in listed, f"/v1/models lists `{name}`: {listed}")
health = httpx.get(f"{ROOT}/health", timeout=60).json()
loaded = [h["id"] for h in health["models"] if h["loaded"]]
check(len(loaded) == 1, f"one model loaded under --max-loaded 1: {health}")
check(health["model"] == FIRST, f"the default model is the first: {health}")
m = metrics()
check(m[("toolgram_model_replies_total", FIRST)] == 7, f"{FIRST}'s replies: {m}")
check(m[("toolgram_model_replies_total", SECOND)] == 7, f"{SECOND}'s replies: {m}")
check(sum(v for (k, _), v in m.items() if k == "toolgram_model_loaded") == 1, f"one loaded: {m}")
check(m[("toolgram_model_unloads_total", SECOND)] >= 1, f"{SECOND} unloaded: {m}")
print(json.dumps({"loads": {k[1]: v for k, v in m.items() if k[0] == "toolgram_model_loads_total"},
                  "load_seconds": {k[1]: v for k, v in m.items() if k[0] == "toolgram_model_load_seconds"}}))
passed()
