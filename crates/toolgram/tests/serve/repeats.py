"""Repeats across turns (run by tests/serve.rs): a call identical to one already answered in
the conversation is left out under `tool_choice: auto` by default, so the model answers in text
or makes another call; `repeats: list` lets it through and lists it; a tool marked
`"x-toolgram": {"repeatable": true}` is exempt. Then OpenAI's Agents SDK runs a one-tool agent
against the server unchanged and must end with a final answer within 4 turns.

Usage: repeats.py BASE_URL
"""

import asyncio
import json
import sys

import openai
from checks import check, passed

BASE = sys.argv[1]
client = openai.OpenAI(base_url=BASE, api_key="unused", max_retries=0, timeout=600)


def weather_tool(repeatable=False):
    f = {"name": "get_weather", "description": "Current weather in a city.",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    if repeatable:
        f["x-toolgram"] = {"repeatable": True}
    return {"type": "function", "function": f}


def answered(city):
    args = json.dumps({"city": city})
    return [{"role": "user", "content": f"What's the weather in {city}?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": args}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"},
            {"role": "user", "content": f"And what's the weather in {city}? Check it."}]


def ask(messages, tools, repeats):
    r = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools, max_tokens=80,
                                       extra_body={"repeats": repeats})
    return r.choices[0], r.model_extra["toolgram"]


def repeats_policy():
    found = False
    for city in ["Paris", "Oslo", "Rome", "Lima"]:
        messages = answered(city)
        listed, t = ask(messages, [weather_tool()], "list")
        repeat = any(json.loads(c.function.arguments) == {"city": city} for c in listed.message.tool_calls or [])
        if not repeat:
            continue
        found = True
        check(t["repeated_calls"], f"a repeat is listed under list: {t}")
        forbidden, t = ask(messages, [weather_tool()], "forbid")
        calls = forbidden.message.tool_calls or []
        check(not any(json.loads(c.function.arguments) == {"city": city} for c in calls), f"excluded: {calls}")
        check(t["excluded_repeats"] and t["excluded_repeats"][0]["tool"] == "get_weather", f"listed: {t}")
        check(calls or forbidden.message.content, f"text or another call instead: {forbidden}")
        exempt, t = ask(messages, [weather_tool(repeatable=True)], "forbid")
        check(not t["excluded_repeats"], f"a repeatable tool may repeat: {t}")
    check(found, "the model repeated an answered call in at least one case (else nothing was tested)")


def agents_sdk_loop():
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    set_tracing_disabled(True)
    ran = []

    @function_tool
    def set_temperature(room: str, celsius: float) -> str:
        """Set a room's thermostat to a temperature in degrees Celsius."""
        ran.append((room, celsius))
        return f"The {room} is now set to {celsius} C."

    model = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=openai.AsyncOpenAI(base_url=BASE, api_key="unused"))
    agent = Agent(name="thermostat", instructions="You control the thermostat.", tools=[set_temperature], model=model)
    result = asyncio.run(Runner.run(agent, "Set the bedroom to 19 degrees.", max_turns=4))
    check(ran, f"the tool ran: {ran}")
    check(isinstance(result.final_output, str) and result.final_output.strip(), f"a final answer: {result.final_output!r}")
    print(f"agents loop: {len(ran)} call(s), final: {result.final_output!r}")


for test in [repeats_policy, agents_sdk_loop]:
    test()
    print(f"ok {test.__name__}", flush=True)
passed()
