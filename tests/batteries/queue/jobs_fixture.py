"""Jobs run by the ``manage.py queue_work`` children of the process tests.

Each job writes what it does to Redis under a key the test chose (a unique prefix), so
the test sees which process ran which delivery, and when. The children import this
module through ``TOOLKIT_JOBS__IMPORTS``.
"""

from __future__ import annotations

import os
import time

import redis

from toolkit_batteries.queue.jobs import job


def _log(url: str, key: str, event: str, run: int) -> None:
    client = redis.Redis.from_url(url)
    client.rpush(f"{key}:log", f"{event} {os.getpid()} {run} {time.time()!r}")
    client.close()


@job(name="tq.fixture.hang_first_run")
def hang_first_run(url: str, key: str, pause: float) -> None:
    """Hang for ``pause`` seconds on the first delivery only; later ones finish at once."""
    client = redis.Redis.from_url(url)
    run = int(client.incr(f"{key}:runs"))
    client.close()
    _log(url, key, "start", run)
    if run == 1:
        time.sleep(pause)
    _log(url, key, "done", run)


@job(name="tq.fixture.record")
def record(url: str, key: str, pause: float = 0.0, peers: int = 0) -> None:
    """Log a start, wait until ``peers`` runs have started, sleep ``pause``, log a finish."""
    client = redis.Redis.from_url(url)
    run = int(client.incr(f"{key}:runs"))
    _log(url, key, "start", run)
    deadline = time.monotonic() + 20
    while int(client.get(f"{key}:runs") or 0) < peers and time.monotonic() < deadline:
        time.sleep(0.01)
    client.close()
    time.sleep(pause)
    _log(url, key, "done", run)
