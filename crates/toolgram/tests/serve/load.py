"""Concurrent clients against `toolgram serve` (run by tests/serve.rs), bounded in count and
time, on loopback only.

Usage: load.py BASE_URL API_KEY BFCL_DIR CLIENTS QUEUE ROUNDS

1. Burst: CLIENTS requests at once (a barrier): every 200 is a valid call from its own
   client's tool set (nothing lost or mixed up), every other answer is a 429 with Retry-After,
   and at least QUEUE + 1 requests are accepted (one running, QUEUE waiting).
2. Sustained: each client sends ROUNDS requests, waiting Retry-After on a 429, while a probe
   checks that /health keeps answering.
3. Streaming: time to the first delta vs the whole reply, one client at a time.
Prints one JSON line of measurements.
"""

import json
import statistics
import sys
import threading
import time

import bfcl
import httpx
import jsonschema

BASE, KEY, BFCL = sys.argv[1].removesuffix("/v1"), sys.argv[2], sys.argv[3]
CLIENTS, QUEUE, ROUNDS = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
HEADERS = {"Authorization": f"Bearer {KEY}"}


def case(i):
    return bfcl.case(BFCL, "multiple", i * 7)


def ask(client, i, stream=False):
    question, tools = case(i)
    body = {"model": "toolgram", "messages": [{"role": "user", "content": question}], "tools": tools,
            "tool_choice": "required", "parallel_tool_calls": False, "max_tokens": 200}
    t0 = time.perf_counter()
    r = client.post("/v1/chat/completions", json=body)
    return r, tools, time.perf_counter() - t0


def valid(r, tools):
    msg = r.json()["choices"][0]
    calls = msg["message"].get("tool_calls") or []
    if msg["finish_reason"] == "length" and not calls:
        return True  # cut before a call was complete: no half call
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    for c in calls:
        if c["function"]["name"] not in schemas:
            return False  # a call from another client's pool: mixed up
        jsonschema.validate(json.loads(c["function"]["arguments"]), schemas[c["function"]["name"]])
    return len(calls) >= 1  # a cut keeps only complete calls, each valid


failures = []


def fail(what):
    failures.append(what)


# 1. Burst.
barrier = threading.Barrier(CLIENTS)
burst = [None] * CLIENTS


def burst_client(i):
    with httpx.Client(base_url=BASE, headers=HEADERS, timeout=300) as c:
        barrier.wait()
        burst[i] = ask(c, i)


threads = [threading.Thread(target=burst_client, args=(i,)) for i in range(CLIENTS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
accepted = 0
for i, (r, tools, _) in enumerate(burst):
    if r.status_code == 200:
        accepted += 1
        if not valid(r, tools):
            fail(f"burst {i}: invalid reply {r.text[:300]}")
    elif r.status_code == 429:
        if r.headers.get("retry-after") is None or r.json()["error"]["code"] != "busy":
            fail(f"burst {i}: 429 without Retry-After or code: {r.text}")
    else:
        fail(f"burst {i}: status {r.status_code}: {r.text[:300]}")
if accepted < min(CLIENTS, QUEUE + 1):
    fail(f"only {accepted} accepted with a queue of {QUEUE}")

# 2. Sustained, with /health probed throughout.
latencies, rejected, done = [], 0, threading.Event()
health = []
lock = threading.Lock()


def probe():
    with httpx.Client(base_url=BASE, timeout=10) as c:
        while not done.is_set():
            t0 = time.perf_counter()
            try:
                ok = c.get("/health").status_code == 200
            except httpx.HTTPError:
                ok = False
            health.append((ok, time.perf_counter() - t0))
            time.sleep(0.2)


def sustained_client(i):
    global rejected
    with httpx.Client(base_url=BASE, headers=HEADERS, timeout=300) as c:
        sent, deadline = 0, time.time() + 240
        while sent < ROUNDS and time.time() < deadline:
            r, tools, dt = ask(c, i * ROUNDS + sent)
            if r.status_code == 429:
                with lock:
                    rejected += 1
                time.sleep(float(r.headers.get("retry-after", "1")))
                continue
            if r.status_code != 200 or not valid(r, tools):
                fail(f"client {i}: {r.status_code} {r.text[:300]}")
            with lock:
                latencies.append(dt)
            sent += 1


prober = threading.Thread(target=probe)
prober.start()
t0 = time.perf_counter()
threads = [threading.Thread(target=sustained_client, args=(i,)) for i in range(CLIENTS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
wall = time.perf_counter() - t0
done.set()
prober.join()
if not health or not all(ok for ok, _ in health):
    fail(f"/health failed under load: {[h for h in health if not h[0]][:3]}")

# 3. Streaming: first delta vs whole reply.
ttfd, full = [], []
with httpx.Client(base_url=BASE, headers=HEADERS, timeout=300) as c:
    for i in range(5):
        question, tools = case(100 + i)
        body = {"model": "toolgram", "messages": [{"role": "user", "content": question}], "tools": tools,
                "tool_choice": "required", "parallel_tool_calls": False, "max_tokens": 200, "stream": True}
        t0, first = time.perf_counter(), None
        with c.stream("POST", "/v1/chat/completions", json=body) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and first is None and '"tool_calls"' in line:
                    first = time.perf_counter() - t0
        if first is not None:
            ttfd.append(first)
            full.append(time.perf_counter() - t0)


def pct(xs, q):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000) if xs else None


print(json.dumps({
    "clients": CLIENTS, "queue": QUEUE,
    "burst_accepted": accepted, "burst_rejected_429": CLIENTS - accepted,
    "sustained_requests": len(latencies), "sustained_429_retried": rejected,
    "latency_ms_p50": pct(latencies, 0.5), "latency_ms_p95": pct(latencies, 0.95),
    "throughput_rps": round(len(latencies) / wall, 2) if wall else None,
    "health_probes": len(health), "health_ms_max": pct([h[1] for h in health], 1.0),
    "stream_first_delta_ms_p50": pct(ttfd, 0.5), "stream_full_ms_p50": pct(full, 0.5),
}))
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
