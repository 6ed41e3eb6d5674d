"""Calls per reply under OpenAI's default `parallel_tool_calls` through `toolgram serve`: a
measurement, not a test (docs/server.md gives its figures).

Usage: parallel_calls.py BASE_URL BFCL_DIR N [MAX_TOKENS [TOOL_CHOICE]]

Sends the first N items of BFCL `parallel` and `parallel_multiple` with the official `openai`
SDK as the OpenAI docs show tools (no `parallel_tool_calls`; `tool_choice` auto unless given)
and reports,
per set: replies ending with calls / cut by the token limit / text, calls per reply, replies
the loop guard cut a runaway call from (`toolgram.cut_call`), completion tokens, and accuracy by
BFCL's possible answers (each expected call matched by a distinct returned call of
the same function whose every argument is one of the acceptable values; `""` = may be left out).
"""

import json
import sys

import bfcl
import openai

BASE, BFCL, N = sys.argv[1], sys.argv[2], int(sys.argv[3])
MAX_TOKENS = int(sys.argv[4]) if len(sys.argv) > 4 else 512
TOOL_CHOICE = sys.argv[5] if len(sys.argv) > 5 else "auto"
client = openai.OpenAI(base_url=BASE, api_key="unused", max_retries=0, timeout=600)


def matches(call, expected):
    (name, params), = expected.items()
    if call["name"] != name.replace(".", "_"):
        return False
    args = call["arguments"]
    for key, ok in params.items():
        if key not in args:
            if "" not in ok:
                return False
        elif args[key] not in ok and not (isinstance(args[key], (int, float)) and any(
                isinstance(o, (int, float)) and float(o) == float(args[key]) for o in ok)):
            return False
    return set(args) <= set(params)


def correct(calls, truth):
    left = list(calls)
    for expected in truth:
        hit = next((c for c in left if matches(c, expected)), None)
        if hit is None:
            return False
        left.remove(hit)
    return not left


report = {}
for category in ("parallel", "parallel_multiple"):
    answers = [json.loads(l) for l in open(f"{BFCL}/possible_answer/BFCL_v4_{category}.json")]
    finish, calls_per_reply, right = {"tool_calls": 0, "length": 0, "stop": 0}, [], 0
    cut, tokens = 0, 0
    for i in range(N):
        question, tools = bfcl.case(BFCL, category, i)
        r = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}],
                                           tools=tools, tool_choice=TOOL_CHOICE, max_tokens=MAX_TOKENS)
        choice = r.choices[0]
        finish[choice.finish_reason] = finish.get(choice.finish_reason, 0) + 1
        calls = [{"name": c.function.name, "arguments": json.loads(c.function.arguments)}
                 for c in choice.message.tool_calls or []]
        calls_per_reply.append(len(calls))
        cut += bool((r.model_extra or {}).get("toolgram", {}).get("cut_call"))
        tokens += r.usage.completion_tokens
        right += correct(calls, answers[i]["ground_truth"])
        print(f"{category} {i}: {choice.finish_reason} {len(calls)} call(s)", file=sys.stderr, flush=True)
    report[category] = {"items": N, "finish_reason": finish, "calls_per_reply_mean": sum(calls_per_reply) / N,
                        "calls_per_reply_max": max(calls_per_reply), "cut_calls": cut,
                        "completion_tokens": tokens, "correct": right, "accuracy": right / N}
print(json.dumps(report, indent=1))
