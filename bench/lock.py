"""Lock benchmarks: the kvserver lock at 1, 16 and 64 threads against raw redis-py.

``acquire`` + ``release`` of a name per thread (no waiting on a held lock) through the
container's shared client, against ``SET NX PX`` + ``EVALSHA`` of the adapter's own
release script on a plain ``redis.Redis``: the commands a hand-written lock sends
(``bench/_redis_curves.py`` has the details and the target, 0.8x raw at every count).
"""

from __future__ import annotations


def bench_threads_curve() -> object:
    """kvserver lock acquire+release by threads vs raw redis-py."""
    from bench._redis_curves import curve

    return curve("lock")


BENCHMARKS = (bench_threads_curve,)
