"""Throughput measured against a baseline in the same process, interleaved.

Every ``bench/`` module that compares the toolkit with a raw library runs both loops
alternately and keeps each one's best round, so a slow moment of a loaded machine hits
both sides instead of one. (The leading underscore keeps this module out of
``python -m bench.run``'s groups.)
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["best_interleaved", "rate"]


def rate(loop: Callable[[int], None], n: int, *, per_unit: int = 1) -> float:
    """Return operations per second of ``loop(n)``, which performs ``n * per_unit`` of them."""
    started = time.perf_counter()
    loop(n)
    return n * per_unit / (time.perf_counter() - started)


def best_interleaved(
    ours: Callable[[int], None],
    base: Callable[[int], None],
    n: int,
    *,
    repeats: int = 5,
    per_unit: int = 1,
) -> tuple[float, float]:
    """Run ``base`` then ``ours`` ``repeats`` times; return (best ours, best base) rates."""
    best_ours = best_base = 0.0
    for _ in range(repeats):
        best_base = max(best_base, rate(base, n, per_unit=per_unit))
        best_ours = max(best_ours, rate(ours, n, per_unit=per_unit))
    return best_ours, best_base
