"""Client traffic against `toolgram serve` and what it should add up to in `/metrics` (used by
metrics_reconcile.py and soak.py).

`Traffic` sends valid requests to the three APIs (streamed and not), malformed and oversized
bodies, an unknown route, requests whose client hangs up before the reply (streamed or not),
and requests that run past the server's `--timeout-s`; it tallies, per (route, status), what
the clients saw, the usage of every reply they read, and the hang-ups. `reconcile()` then
asserts that every `toolgram_requests_total{route,status}` equals what the clients saw (a
hung-up request is 499), `client_disconnects_total` the hang-ups, the token counters the sum
of the replies' usage plus the tokens of the runs cancelled on the way, and the prompt-cache
hits and misses the replies with and without cached tokens.
"""

import collections
import json
import re
import threading
import time

import httpx

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
# SmolLM2's end-of-generation tokens (<|endoftext|>, <|im_end|>): biased away, the test model
# writes until max_tokens, long past a short --timeout-s.
ENDLESS = {"0": -100, "2": -100}


class Traffic:
    def __init__(self, base, key):
        self.base, self.root, self.key = base, base.removesuffix("/v1"), key
        self.h = {"Authorization": f"Bearer {key}"}
        # Raw bodies say what they are (any other Content-Type is a 415).
        self.json_h = {**self.h, "Content-Type": "application/json"}
        self.seen = collections.Counter()   # (route, status) as the clients saw them
        self.usage = collections.Counter()  # prompt, cached, completion, hits, misses
        self.hung_up = 0                    # clients that left before their reply ended
        self.timed_out = []                 # seconds each 504 took, as its client measured
        self.lock = threading.Lock()

    def saw(self, route, status):
        with self.lock:
            self.seen[(route, status)] += 1

    def add_usage(self, prompt, cached, completion):
        with self.lock:
            self.usage["prompt"] += prompt
            self.usage["cached"] += cached
            self.usage["completion"] += completion
            self.usage["hits" if cached else "misses"] += 1

    def exchange(self, route, url, body, headers, stream, usage):
        """Send `body` to `url`, streamed or not; `usage` reads (prompt, cached, completion)
        from one streamed event or the whole reply, or None; the last one read counts."""
        read = None
        if stream:
            with httpx.stream("POST", url, json=body, headers=headers, timeout=300) as r:
                self.saw(route, r.status_code)
                for line in r.iter_lines():
                    if line.startswith("data: {"):
                        read = usage(json.loads(line[6:])) or read
        else:
            r = httpx.post(url, json=body, headers=headers, timeout=300)
            self.saw(route, r.status_code)
            read = usage(r.json())
        if read:
            self.add_usage(*read)

    def chat(self, i, stream):
        body = {"model": "any", "messages": [{"role": "user", "content": f"Weather in city number {i}?"}],
                "tools": TOOLS, "max_tokens": 120, "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}

        def usage(d):
            u = d.get("usage")
            return u and (u["prompt_tokens"], u["prompt_tokens_details"]["cached_tokens"], u["completion_tokens"])
        self.exchange("/v1/chat/completions", f"{self.base}/chat/completions", body, self.h, stream, usage)

    def responses(self, i, stream):
        body = {"model": "any", "input": f"Weather in town {i}?", "max_output_tokens": 120, "stream": stream,
                "tools": [dict(type="function", **TOOLS[0]["function"])]}

        def usage(d):
            if stream and d["type"] not in ("response.completed", "response.incomplete"):
                return None
            u = (d["response"] if stream else d).get("usage")
            return u and (u["input_tokens"], u["input_tokens_details"]["cached_tokens"], u["output_tokens"])
        self.exchange("/v1/responses", f"{self.base}/responses", body, self.h, stream, usage)

    def messages(self, i, stream):
        body = {"model": "claude-x", "max_tokens": 120, "stream": stream,
                "messages": [{"role": "user", "content": f"Weather in village {i}?"}],
                "tools": [{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}]}
        h = {"x-api-key": self.key, "anthropic-version": "2023-06-01"}

        def usage(d):
            if stream:
                u = d["usage"] if d["type"] == "message_delta" else None
                if not u or not (u["input_tokens"] or u["cache_read_input_tokens"] or u["output_tokens"]):
                    return None
            elif d.get("type") == "message" and not d.get("toolgram", {}).get("error"):
                u = d["usage"]
            else:
                return None
            return u["input_tokens"] + u["cache_read_input_tokens"], u["cache_read_input_tokens"], u["output_tokens"]
        self.exchange("/v1/messages", f"{self.root}/v1/messages", body, h, stream, usage)

    def malformed(self, i):
        r = httpx.post(f"{self.base}/chat/completions", content=b"{not json", headers=self.json_h, timeout=60)
        self.saw("/v1/chat/completions", r.status_code)

    def oversized(self, i):
        r = httpx.post(f"{self.base}/responses", content=b"[" + b" " * 300_000 + b"]", headers=self.json_h, timeout=60)
        self.saw("/v1/responses", r.status_code)

    def duplicate_key(self, i):
        """A body naming `model` twice: refused (400), whichever comes first."""
        body = b'{"model":"nope","model":"toolgram","messages":[{"role":"user","content":"Hi"}]}'
        r = httpx.post(f"{self.base}/chat/completions", content=body, headers=self.json_h, timeout=60)
        self.saw("/v1/chat/completions", r.status_code)

    def too_many_votes(self, i):
        """More ballots than --max-votes: refused (400) before any is queued."""
        body = {"messages": [{"role": "user", "content": "Hi"}], "votes": 16, "max_tokens": 4}
        r = httpx.post(f"{self.base}/chat/completions", json=body, headers=self.h, timeout=60)
        self.saw("/v1/chat/completions", r.status_code)

    def unknown_route(self, i):
        r = httpx.get(f"{self.root}/v2/nothing", headers=self.h, timeout=60)
        self.saw("unmatched", r.status_code)

    def hang_up(self, i):
        """A long non-streamed reply whose client gives up after a second."""
        body = {"messages": [{"role": "user", "content": "Tell me a very long story about the sea."}],
                "max_tokens": 400, "logit_bias": ENDLESS, "repeated_text": "keep"}
        try:
            httpx.post(f"{self.base}/chat/completions", json=body, headers=self.h, timeout=1.0)
            raise AssertionError("the story should take longer than a second")
        except httpx.TimeoutException:
            with self.lock:
                self.hung_up += 1
            self.saw("/v1/chat/completions", 499)

    def stream_hang_up(self, i):
        """A streamed story whose client leaves after its first event."""
        body = {"messages": [{"role": "user", "content": f"Tell me a story about ship {i}."}],
                "max_tokens": 2000, "logit_bias": ENDLESS, "stream": True, "repeated_text": "keep"}
        with httpx.stream("POST", f"{self.base}/chat/completions", json=body, headers=self.h, timeout=300) as r:
            self.saw("/v1/chat/completions", r.status_code)
            next(r.iter_lines())
        with self.lock:
            self.hung_up += 1

    def past_timeout(self, i):
        """A story longer than the server's --timeout-s: a 504, and its run cancelled."""
        body = {"messages": [{"role": "user", "content": f"Tell me an endless story about island {i}."}],
                "max_tokens": 4000, "logit_bias": ENDLESS, "repeated_text": "keep"}
        t0 = time.perf_counter()
        r = httpx.post(f"{self.base}/chat/completions", json=body, headers=self.h, timeout=300)
        self.saw("/v1/chat/completions", r.status_code)
        if r.status_code == 504:
            with self.lock:
                self.timed_out.append(time.perf_counter() - t0)

    def metrics(self):
        text = httpx.get(f"{self.root}/metrics", headers=self.h, timeout=60).text
        requests = {(m[0], int(m[1])): int(m[2]) for m in
                    re.findall(r'toolgram_requests_total\{route="([^"]+)",status="(\d+)"\} (\d+)', text)}
        value = lambda name: int(float(re.search(rf"^{name} (\S+)$", text, re.M).group(1)))
        return requests, value, text

    def settled_metrics(self, timeout=120):
        """`/metrics` once every hung-up request was noticed and the cancelled runs ended
        (their tokens are counted when they do): the counters still for two seconds."""
        deadline, last, still = time.time() + timeout, None, 0
        while True:
            requests, value, text = self.metrics()
            noticed = value("toolgram_client_disconnects_total") >= self.hung_up
            now = (value("toolgram_completion_tokens_total"), value("toolgram_queue_depth"))
            still = still + 1 if noticed and now == last and now[1] == 0 else 0
            last = now
            if still >= 4 or time.time() > deadline:
                # The polls and probes of the scripts themselves are not traffic.
                requests = {k: v for k, v in requests.items() if k[0] not in ("/metrics", "/health")}
                return requests, value, text
            time.sleep(0.5)

    def reconcile(self):
        """Assert that `/metrics` adds up to what the clients received; returns the figures."""
        requests, value, text = self.settled_metrics()
        seen = dict(self.seen)
        assert requests == seen, f"requests_total {requests} != clients saw {seen}"
        assert value("toolgram_client_disconnects_total") == self.hung_up, (self.hung_up, text)
        cancelled_prompt = value("toolgram_cancelled_prompt_tokens_total")
        cancelled = value("toolgram_cancelled_completion_tokens_total")
        u = self.usage
        assert value("toolgram_prompt_tokens_total") == u["prompt"] + cancelled_prompt, (u, text)
        assert value("toolgram_completion_tokens_total") == u["completion"] + cancelled, (u, text)
        assert value("toolgram_cached_prompt_tokens_total") >= u["cached"], (u, text)
        assert value("toolgram_prompt_cache_hits_total") == u["hits"], (u, text)
        assert value("toolgram_prompt_cache_misses_total") == u["misses"], (u, text)
        if self.hung_up:
            assert cancelled > 0, f"{self.hung_up} runs cancelled while decoding, no tokens counted: {text}"
        for name in ("toolgram_queue_wait_seconds", "toolgram_time_to_first_token_seconds",
                     "toolgram_request_duration_seconds"):
            for route in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
                assert f'{name}_count{{route="{route}"}}' in text, (name, route)
        return {"requests": {f"{r} {s}": n for (r, s), n in sorted(seen.items())}, "usage": dict(u),
                "hung_up": self.hung_up, "cancelled_completion_tokens": cancelled}
