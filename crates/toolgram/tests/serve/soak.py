"""A bounded soak of `toolgram serve` on loopback (run by tests/serve.rs; docs/server.md gives
its figures).

Usage: soak.py BASE_URL API_KEY SERVER_PID SECONDS TIMEOUT_S

For SECONDS, concurrent clients send every kind of traffic in traffic.py in turn: valid
requests to the three APIs (streamed and not), malformed and oversized bodies, a key given
twice, more ballots than --max-votes, an unknown
route, clients hanging up (streamed and not), and, from one client, runs past the server's
--timeout-s (TIMEOUT_S). Meanwhile a probe times `/health` and samples the server's RSS.
Asserts: no status 5xx but 504s (`--timeout-s` counts the queue wait, so a valid request that
waited long may get one too), those of the runs past the timeout each after TIMEOUT_S or more,
and at least one; every request answered (no client error but the hang-ups it chose); `/metrics` reconciled
with what the clients received; RSS after the soak within 64 MiB of RSS after warm-up;
`/health` always under a second. Prints one JSON line of figures.
"""

import itertools
import json
import statistics
import sys
import threading
import time

import httpx

from traffic import Traffic

BASE, KEY, PID = sys.argv[1], sys.argv[2], int(sys.argv[3])
SECONDS, TIMEOUT_S = float(sys.argv[4]), float(sys.argv[5])
CLIENTS = 5
t = Traffic(BASE, KEY)
stop = threading.Event()
errors, health, rss = [], [], []


def rss_mib():
    with open(f"/proc/{PID}/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kb / 1024


def probe():
    """/health every quarter second, RSS every second."""
    with httpx.Client(base_url=t.root, timeout=30) as c:
        for tick in itertools.count():
            if stop.is_set():
                return
            t0 = time.perf_counter()
            r = c.get("/health")
            health.append(time.perf_counter() - t0)
            if r.status_code != 200:
                errors.append(f"/health answered {r.status_code}")
            if tick % 4 == 0:
                rss.append((time.perf_counter(), rss_mib()))
            time.sleep(0.25)


MIX = [lambda i: t.chat(i, False), lambda i: t.chat(i, True), lambda i: t.responses(i, False),
       lambda i: t.responses(i, True), lambda i: t.messages(i, False), lambda i: t.messages(i, True),
       t.malformed, t.oversized, t.duplicate_key, t.too_many_votes, t.unknown_route, t.hang_up,
       t.stream_hang_up]


def client(n):
    """Client 0 alternates runs past the timeout with the mix; the others go through the mix,
    each from its own place in it."""
    deadline = time.time() + SECONDS
    for i in itertools.count():
        if time.time() > deadline:
            return
        job = t.past_timeout if n == 0 and i % 2 == 0 else MIX[(n * 3 + i) % len(MIX)]
        try:
            job(n * 1000 + i)
        except Exception as e:  # a lost reply: reported, the soak goes on
            errors.append(f"client {n}, job {i}: {type(e).__name__}: {e}")


started = time.perf_counter()
prober = threading.Thread(target=probe)
prober.start()
workers = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
for w in workers:
    w.start()
for w in workers:
    w.join()
stop.set()
prober.join()
elapsed = time.perf_counter() - started

assert not errors, "\n".join(errors)
server_errors = {k: v for k, v in t.seen.items() if k[1] >= 500 and k[1] != 504}
assert not server_errors, f"5xx the soak did not cause: {server_errors}"
assert t.timed_out, "no run went past the timeout: the soak caused no 504"
assert min(t.timed_out) >= TIMEOUT_S - 0.5, f"a 504 before the timeout: {t.timed_out}"
figures = t.reconcile()
warm = [mib for at, mib in rss if at - started >= 10] or [rss[-1][1]]
final = rss_mib()
assert final - warm[0] <= 64, f"RSS grew from {warm[0]:.0f} MiB after warm-up to {final:.0f} MiB"
health.sort()
assert health[-1] < 1.0, f"/health took {health[-1]:.3f} s"
figures.update({
    "seconds": round(elapsed, 1), "clients": CLIENTS, "requests_sent": sum(t.seen.values()),
    "timeouts_504": {"past_timeout": len(t.timed_out),
                     "all": sum(n for (_, status), n in t.seen.items() if status == 504)},
    "rss_mib": {"warm": round(warm[0]), "max": round(max(m for _, m in rss)), "final": round(final)},
    "health_ms": {"n": len(health), "p50": round(statistics.median(health) * 1e3, 1),
                  "p99": round(health[int(len(health) * 0.99) - 1] * 1e3, 1),
                  "max": round(health[-1] * 1e3, 1)},
})
print(json.dumps(figures))
print("soak passed")
