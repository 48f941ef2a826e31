"""Child process of the multi-process test: draw from one shared bucket, report counts.

Usage: ``python -m tests.batteries.ratelimit.child_allow URL PREFIX RATE BURST SECONDS``.
Prints ``ready``, waits for the parent's start key, calls ``allow`` for SECONDS, then
prints one JSON line: allowed and total decisions, and the wall-clock instants taken
just before the first and just after the last decision.
"""

from __future__ import annotations

import json
import sys
import time

import redis

from toolkit_batteries.ratelimit.adapters.kvserver import KVServerRateLimiter
from toolkit_batteries.ratelimit.base import Limits


def main() -> None:
    url, prefix, rate, burst, seconds = sys.argv[1:6]
    client = redis.Redis.from_url(url)
    limiter = KVServerRateLimiter(client, Limits(float(rate), int(burst)), prefix=prefix)
    print("ready", flush=True)
    while not client.exists(f"{prefix}start"):
        time.sleep(0.005)
    allowed = total = 0
    first = time.time()
    stop = time.monotonic() + float(seconds)
    while time.monotonic() < stop:
        allowed += limiter.allow("shared").allowed
        total += 1
    last = time.time()
    print(json.dumps({"allowed": allowed, "total": total, "first": first, "last": last}))


if __name__ == "__main__":
    main()
