"""`/metrics` reconciled with what clients received (run by tests/serve.rs).

Usage: metrics_reconcile.py BASE_URL API_KEY

One round of every kind of traffic in traffic.py (but the run past the timeout) from
concurrent clients, then `Traffic.reconcile()`.
"""

import concurrent.futures
import json
import sys

from traffic import Traffic

t = Traffic(sys.argv[1], sys.argv[2])
jobs = ([(t.chat, i, False) for i in range(3)] + [(t.chat, i, True) for i in range(2)]
        + [(t.responses, i, False) for i in range(2)] + [(t.responses, 9, True)]
        + [(t.messages, i, False) for i in range(2)] + [(t.messages, 9, True)]
        + [(t.malformed, i) for i in range(2)] + [(t.oversized, 0), (t.unknown_route, 0)]
        + [(t.hang_up, i) for i in range(2)] + [(t.stream_hang_up, 0)])
with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
    for f in [pool.submit(*job) for job in jobs]:
        f.result()
print(json.dumps(t.reconcile()))
print("metrics reconciled")
