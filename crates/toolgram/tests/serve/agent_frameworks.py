"""Agent frameworks written by others, unchanged, against `toolgram serve` (run by
tests/serve.rs):

- Pydantic AI over Anthropic's Messages API: an agent whose output is a Python function the
  model must call (tool_choice `any`), run by the framework with the parsed arguments;
- LangChain (`langchain-openai`'s ChatOpenAI on the Responses API): a tool-calling loop with
  `bind_tools` — the model's call runs the tool, its result goes back as a ToolMessage, and the
  model answers.

Usage: agent_frameworks.py BASE_URL API_KEY
"""

import sys
from checks import check, passed

BASE, KEY = sys.argv[1], sys.argv[2]


def pydantic_ai_over_anthropic():
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    ran = []

    def set_temperature(room: str, celsius: float) -> str:
        """Set a room's thermostat to a temperature in degrees Celsius."""
        ran.append((room, celsius))
        return f"{room} set to {celsius} C"

    model = AnthropicModel("claude-sonnet-4-5",
                           provider=AnthropicProvider(base_url=BASE.removesuffix("/v1"), api_key=KEY))
    agent = Agent(model, output_type=set_temperature, system_prompt="You control the thermostat.")
    result = agent.run_sync("Set the bedroom to 19 degrees.", model_settings={"max_tokens": 80})
    check(len(ran) == 1, f"the framework ran the model's call once: {ran}")
    room, celsius = ran[0]
    check(isinstance(room, str) and isinstance(celsius, float), f"typed arguments: {ran}")
    check(result.output == f"{room} set to {celsius} C", f"the output is the tool's: {result.output!r}")


def langchain_over_responses():
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    ran = []

    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        ran.append(city)
        return f"sunny, 21 C in {city}"

    llm = ChatOpenAI(model="gpt-4o", base_url=BASE, api_key=KEY, use_responses_api=True,
                     max_tokens=60, temperature=0, max_retries=0)
    messages = [HumanMessage("What's the weather in Paris?")]
    first = llm.bind_tools([get_weather], tool_choice="get_weather").invoke(messages)
    check(len(first.tool_calls) == 1 and first.tool_calls[0]["name"] == "get_weather", f"a call: {first}")
    messages.append(first)
    for call in first.tool_calls:
        messages.append(ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"]))
    check(len(ran) == 1 and ran[0], f"the tool ran: {ran}")
    answer = llm.bind_tools([get_weather], tool_choice="none").invoke(messages)
    text = answer.text if isinstance(answer.text, str) else answer.text()
    check(not answer.tool_calls and text.strip(), f"a text answer after the result: {answer}")


for test in [pydantic_ai_over_anthropic, langchain_over_responses]:
    test()
    print(f"ok {test.__name__}", flush=True)
passed()
