"""Tools and a response format in one request, as agent frameworks send them (run by
tests/serve.rs): the weather tool (`get_weather` of examples/weather.json) beside a json_schema format, on Chat
Completions (`response_format`), Responses (`text.format`) and Anthropic Messages
(`output_config.format`), streamed and not. `required` always gives a valid call, `none`
always schema-valid JSON, `auto` one or the other, valid, on every reply; the reply says which
branch it took (`toolgram.response_format_branch`). Then OpenAI's Agents SDK with an
`output_type` and a tool runs its loop to a schema-valid final answer.

Usage: tools_and_format.py BASE_URL API_KEY WEATHER_TOOLS_JSON
"""

import json
import sys

import anthropic
import jsonschema
import openai
from checks import check, passed

BASE, KEY, TOOLS = sys.argv[1], sys.argv[2], sys.argv[3]
client = openai.OpenAI(base_url=BASE, api_key=KEY, max_retries=0, timeout=300)
WEATHER = [t for t in json.load(open(TOOLS)) if t["function"]["name"] == "get_weather"]
PARAMS = {t["function"]["name"]: t["function"]["parameters"] for t in WEATHER}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "cold": {"type": "boolean"}},
          "required": ["city", "cold"], "additionalProperties": False}
PROMPTS = ["Is it cold in Oslo today?", "What's the weather like in Paris?", "Tell me if Rome is cold.",
           "Should I wear a coat in Berlin?"]


def valid_call(name, arguments):
    check(name in PARAMS, f"a tool of the pool: {name}")
    jsonschema.validate(json.loads(arguments), PARAMS[name])


def valid_answer(text):
    jsonschema.validate(json.loads(text), SCHEMA)


def chat(choice, prompt, stream):
    kw = dict(model="toolgram", messages=[{"role": "user", "content": prompt}], tools=WEATHER,
              tool_choice=choice, max_tokens=200,
              response_format={"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA}})
    if not stream:
        r = client.chat.completions.create(**kw)
        m = r.choices[0].message
        calls = [(c.function.name, c.function.arguments) for c in (m.tool_calls or [])]
        return calls, m.content, r.model_extra["toolgram"]
    calls, content, toolgram = {}, "", None
    for chunk in client.chat.completions.create(stream=True, **kw):
        toolgram = (chunk.model_extra or {}).get("toolgram") or toolgram
        for choice_ in chunk.choices:
            d = choice_.delta
            content += d.content or ""
            for c in d.tool_calls or []:
                name, args = calls.get(c.index, ("", ""))
                calls[c.index] = (name + (c.function.name or ""), args + (c.function.arguments or ""))
    return [calls[i] for i in sorted(calls)], content or None, toolgram


def responses(choice, prompt, stream):
    tools = [{"type": "function", **t["function"]} for t in WEATHER]
    kw = dict(model="toolgram", input=prompt, tools=tools, tool_choice=choice, max_output_tokens=200,
              text={"format": {"type": "json_schema", "name": "weather", "schema": SCHEMA}})
    if stream:
        final = None
        for event in client.responses.create(stream=True, **kw):
            if event.type == "response.completed":
                final = event.response
        r = final
    else:
        r = client.responses.create(**kw)
    calls = [(o.name, o.arguments) for o in r.output if o.type == "function_call"]
    texts = [c.text for o in r.output if o.type == "message" for c in o.content if c.type == "output_text"]
    return calls, "".join(texts) or None, (r.model_extra or {}).get("toolgram")


def messages(choice, prompt, stream):
    c = anthropic.Anthropic(base_url=BASE.removesuffix("/v1"), api_key=KEY, max_retries=0)
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
              "input_schema": t["function"]["parameters"]} for t in WEATHER]
    body = dict(model="claude-sonnet-4-5", max_tokens=200, tools=tools, tool_choice={"type": choice},
                messages=[{"role": "user", "content": prompt}],
                extra_body={"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}})
    if stream:
        with c.messages.stream(**body) as s:
            m = s.get_final_message()
    else:
        m = c.messages.create(**body)
    calls = [(b.name, json.dumps(b.input)) for b in m.content if b.type == "tool_use"]
    text = "".join(b.text for b in m.content if b.type == "text")
    return calls, text or None, (m.model_extra or {}).get("toolgram")


def every_branch_valid():
    apis = [(chat, {"required": "required", "none": "none", "auto": "auto"}),
            (responses, {"required": "required", "none": "none", "auto": "auto"}),
            (messages, {"required": "any", "none": "none", "auto": "auto"})]
    seen = {"calls": 0, "answer": 0}
    for api, names in apis:
        for choice in ["required", "none", "auto"]:
            for stream in [False, True]:
                for prompt in PROMPTS[:2] if api is messages else PROMPTS:
                    calls, content, toolgram = api(names[choice], prompt, stream)
                    where = f"{api.__name__} {choice} stream={stream} {prompt!r}: {calls} {content!r}"
                    if choice == "required":
                        check(calls, f"a call under required: {where}")
                    if choice == "none":
                        check(not calls, f"no call under none: {where}")
                    if calls:
                        for name, arguments in calls:
                            valid_call(name, arguments)
                    else:
                        valid_answer(content)
                    branch = "calls" if calls else "answer"
                    seen[branch] += choice == "auto"
                    if toolgram is not None:
                        check(toolgram.get("response_format_branch") == branch, f"the branch named: {where} {toolgram}")
    print(f"auto took the branches {seen}", flush=True)


def prompt_carries_the_tools():
    """The tools are in the prompt beside a format (they were once dropped without a word)."""
    base = dict(model="toolgram", messages=[{"role": "user", "content": "Is it cold in Oslo?"}], max_tokens=1,
                response_format={"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA}})
    alone = client.chat.completions.create(**base).usage.prompt_tokens
    beside = client.chat.completions.create(tools=WEATHER, tool_choice="none", **base).usage.prompt_tokens
    check(beside > alone + 20, f"the tools are in the prompt: {alone} vs {beside} prompt tokens")


def agents_sdk_output_type_with_a_tool():
    """The Agents SDK with `output_type` (Responses `text.format`) and a tool: its loop ends on
    a final answer it parses into the output type."""
    import asyncio
    from agents import Agent, ModelSettings, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
    from pydantic import BaseModel
    set_tracing_disabled(True)

    class Weather(BaseModel):
        city: str
        cold: bool

    seen = []

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        seen.append(city)
        return f"{city}: 2 degrees Celsius, snow"

    model = OpenAIResponsesModel(model="toolgram", openai_client=openai.AsyncOpenAI(base_url=BASE, api_key=KEY))
    agent = Agent(name="weather", instructions="Use get_weather, then answer.", tools=[get_weather],
                  model=model, output_type=Weather, model_settings=ModelSettings(max_tokens=80))
    result = asyncio.run(Runner.run(agent, "Is it cold in Oslo?", max_turns=6))
    check(isinstance(result.final_output, Weather), f"a schema-valid final answer: {result.final_output!r}")
    print(f"agents sdk: tool ran for {seen}, final output {result.final_output!r}", flush=True)


for test in [prompt_carries_the_tools, every_branch_valid, agents_sdk_output_type_with_a_tool]:
    test()
    print(f"ok {test.__name__}", flush=True)
passed()
