"""`/metrics` reconciled with what clients received (run by tests/serve.rs).

Usage: metrics_reconcile.py BASE_URL API_KEY

Concurrent clients send valid requests to the three APIs (streamed and not), malformed and
oversized bodies, an unknown route, and requests they hang up on before the reply. Then every
`toolgram_requests_total{route,status}` must equal what the clients saw (a hung-up request is
499), `client_disconnects_total` the hang-ups, the token counters the sum of the replies'
usage, and the prompt-cache hits and misses the replies with and without cached tokens.
"""

import collections
import concurrent.futures
import json
import re
import sys
import time

import httpx

BASE, KEY = sys.argv[1], sys.argv[2]
ROOT = BASE.removesuffix("/v1")
H = {"Authorization": f"Bearer {KEY}"}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
seen = collections.Counter()      # (route, status) as the clients saw them
usage = collections.Counter()     # prompt, cached, completion, hits, misses
hung_up = 0


def add_usage(prompt, cached, completion):
    usage["prompt"] += prompt
    usage["cached"] += cached
    usage["completion"] += completion
    usage["hits" if cached else "misses"] += 1


def chat(i, stream):
    body = {"model": "any", "messages": [{"role": "user", "content": f"Weather in city number {i}?"}],
            "tools": TOOLS, "max_tokens": 120, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
        with httpx.stream("POST", f"{BASE}/chat/completions", json=body, headers=H, timeout=300) as r:
            seen[("/v1/chat/completions", r.status_code)] += 1
            for line in r.iter_lines():
                if line.startswith("data: {"):
                    u = json.loads(line[6:]).get("usage")
                    if u:
                        add_usage(u["prompt_tokens"], u["prompt_tokens_details"]["cached_tokens"],
                                  u["completion_tokens"])
        return
    r = httpx.post(f"{BASE}/chat/completions", json=body, headers=H, timeout=300)
    seen[("/v1/chat/completions", r.status_code)] += 1
    u = r.json().get("usage")
    if u:
        add_usage(u["prompt_tokens"], u["prompt_tokens_details"]["cached_tokens"], u["completion_tokens"])


def responses(i, stream):
    body = {"model": "any", "input": f"Weather in town {i}?", "tools": [dict(type="function", **TOOLS[0]["function"])],
            "max_output_tokens": 120, "stream": stream}
    if stream:
        with httpx.stream("POST", f"{BASE}/responses", json=body, headers=H, timeout=300) as r:
            seen[("/v1/responses", r.status_code)] += 1
            for line in r.iter_lines():
                if line.startswith("data: {"):
                    d = json.loads(line[6:])
                    u = d.get("response", {}).get("usage") if d["type"] in ("response.completed", "response.incomplete") else None
                    if u:
                        add_usage(u["input_tokens"], u["input_tokens_details"]["cached_tokens"], u["output_tokens"])
        return
    r = httpx.post(f"{BASE}/responses", json=body, headers=H, timeout=300)
    seen[("/v1/responses", r.status_code)] += 1
    u = r.json().get("usage")
    if u:
        add_usage(u["input_tokens"], u["input_tokens_details"]["cached_tokens"], u["output_tokens"])


def messages(i, stream):
    body = {"model": "claude-x", "max_tokens": 120, "stream": stream,
            "messages": [{"role": "user", "content": f"Weather in village {i}?"}],
            "tools": [{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}]}
    h = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    if stream:
        last = None
        with httpx.stream("POST", f"{ROOT}/v1/messages", json=body, headers=h, timeout=300) as r:
            seen[("/v1/messages", r.status_code)] += 1
            for line in r.iter_lines():
                if line.startswith("data: {"):
                    d = json.loads(line[6:])
                    if d["type"] == "message_delta":
                        last = d["usage"]
        if last and (last["input_tokens"] or last["cache_read_input_tokens"] or last["output_tokens"]):
            add_usage(last["input_tokens"] + last["cache_read_input_tokens"], last["cache_read_input_tokens"],
                      last["output_tokens"])
        return
    r = httpx.post(f"{ROOT}/v1/messages", json=body, headers=h, timeout=300)
    seen[("/v1/messages", r.status_code)] += 1
    m = r.json()
    if m.get("type") == "message" and not m.get("toolgram", {}).get("error"):
        u = m["usage"]
        add_usage(u["input_tokens"] + u["cache_read_input_tokens"], u["cache_read_input_tokens"], u["output_tokens"])


def malformed(i):
    r = httpx.post(f"{BASE}/chat/completions", content=b"{not json", headers=H, timeout=60)
    seen[("/v1/chat/completions", r.status_code)] += 1


def oversized(i):
    r = httpx.post(f"{BASE}/responses", content=b"[" + b" " * 300_000 + b"]", headers=H, timeout=60)
    seen[("/v1/responses", r.status_code)] += 1


def unknown_route(i):
    r = httpx.get(f"{ROOT}/v2/nothing", headers=H, timeout=60)
    seen[("unmatched", r.status_code)] += 1


def hang_up(i):
    """A long non-streamed reply whose client gives up after a second."""
    global hung_up
    body = {"messages": [{"role": "user", "content": "Tell me a very long story about the sea."}], "max_tokens": 400}
    try:
        httpx.post(f"{BASE}/chat/completions", json=body, headers=H, timeout=1.0)
        raise AssertionError("the story should take longer than a second")
    except httpx.TimeoutException:
        hung_up += 1
        seen[("/v1/chat/completions", 499)] += 1


jobs = ([(chat, i, False) for i in range(3)] + [(chat, i, True) for i in range(2)]
        + [(responses, i, False) for i in range(2)] + [(responses, 9, True)]
        + [(messages, i, False) for i in range(2)] + [(messages, 9, True)]
        + [(malformed, i) for i in range(2)] + [(oversized, 0), (unknown_route, 0)]
        + [(hang_up, i) for i in range(2)])
with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
    for f in [pool.submit(*job) for job in jobs]:
        f.result()


def metrics():
    text = httpx.get(f"{ROOT}/metrics", headers=H, timeout=60).text
    requests = {(m[0], int(m[1])): int(m[2]) for m in
                re.findall(r'toolgram_requests_total\{route="([^"]+)",status="(\d+)"\} (\d+)', text)}
    value = lambda name: int(float(re.search(rf"^{name} (\S+)$", text, re.M).group(1)))
    return requests, value, text


# The hung-up runs are noticed when the server next looks at their connections: wait for it.
deadline = time.time() + 60
while True:
    requests, value, text = metrics()
    if requests.get(("/v1/chat/completions", 499), 0) >= hung_up or time.time() > deadline:
        break
    time.sleep(0.5)
requests.pop(("/metrics", 200), None)  # the polls above
assert requests == dict(seen), f"requests_total {requests} != clients saw {dict(seen)}"
assert value("toolgram_client_disconnects_total") == hung_up, text
assert value("toolgram_prompt_tokens_total") == usage["prompt"], (usage, text)
assert value("toolgram_cached_prompt_tokens_total") == usage["cached"], (usage, text)
assert value("toolgram_completion_tokens_total") == usage["completion"], (usage, text)
assert value("toolgram_prompt_cache_hits_total") == usage["hits"], (usage, text)
assert value("toolgram_prompt_cache_misses_total") == usage["misses"], (usage, text)
for name in ("toolgram_queue_wait_seconds", "toolgram_time_to_first_token_seconds", "toolgram_request_duration_seconds"):
    for route in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
        assert f'{name}_count{{route="{route}"}}' in text, (name, route)
print(json.dumps({"requests": {f"{r} {s}": n for (r, s), n in sorted(seen.items())}, "usage": usage,
                  "hung_up": hung_up}))
print("metrics reconciled")
