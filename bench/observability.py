"""Observability benchmarks: what ``span()`` costs around an operation, in the same run.

Each loop calls a trivial function; the baseline calls it bare, the measured side wraps
each call in ``with obs.span("bench.op", k="v"):``. Reported as wrapped calls per second
against bare calls per second, with the added cost per span in microseconds in the name.

* ``noop``: the span is a shared do-nothing context manager. Target: under 1 µs added.
* ``otlp``: the OpenTelemetry SDK with its ``BatchSpanProcessor`` exporting to a local
  OTLP/HTTP receiver (the tests' receiver on 127.0.0.1) in the background; the raw SDK
  (``tracer.start_as_current_span`` on the same provider) is measured too, so the figure
  shows the battery's own overhead over the SDK. Target: at least 0.8x the raw SDK rate.

Runs of both sides are interleaved and the best of several repeats is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bench.foundation import Result


def _op() -> int:
    return 1


def _rate(loop: Callable[[int], None], n: int) -> float:
    started = time.perf_counter()
    loop(n)
    return n / (time.perf_counter() - started)


def _best(loops: list[Callable[[int], None]], n: int, repeats: int) -> list[float]:
    best = [0.0] * len(loops)
    for _ in range(repeats):
        for i, loop in enumerate(loops):
            best[i] = max(best[i], _rate(loop, n))
    return best


def _bare(n: int) -> None:
    op = _op
    for _ in range(n):
        op()


def _spanned(obs: object) -> Callable[[int], None]:
    span = obs.span  # type: ignore[attr-defined]

    def loop(n: int) -> None:
        op = _op
        for _ in range(n):
            with span("bench.op", k="v"):
                op()

    return loop


def _open(block: dict) -> tuple[object, object]:
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    container = Container(Config.load({"observability": block}, {}))
    return container, container.observability()


def bench_noop() -> Result:
    """Time ``span()`` on the noop adapter against a bare call."""
    container, obs = _open({"adapter": "noop"})
    try:
        spanned, bare = _best([_spanned(obs), _bare], n=200_000, repeats=5)
    finally:
        container.close()  # type: ignore[attr-defined]
    added_us = (1 / spanned - 1 / bare) * 1e6
    return Result(
        f"noop span() vs bare call (+{added_us:.2f} µs/span)",
        spanned,
        bare,
        "calls/s",
        "< 1 µs added",
        added_us < 1.0,
        number=",.0f",
    )


def bench_otlp() -> Result:
    """Time ``span()`` on the otlp adapter against the raw SDK and a bare call."""
    from tests.batteries.observability.receiver import start_receiver

    receiver, server = start_receiver()
    container, obs = _open(
        {"adapter": "otlp", "options": {"endpoint": receiver.url, "insecure": True}}
    )
    tracer = obs.tracer_provider.get_tracer("bench")  # type: ignore[attr-defined]

    def raw(n: int) -> None:
        start, op = tracer.start_as_current_span, _op
        for _ in range(n):
            with start("bench.op", attributes={"k": "v"}):
                op()

    try:
        ours, sdk, bare = _best([_spanned(obs), raw, _bare], n=20_000, repeats=5)
    finally:
        container.close()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()
    added_us = (1 / ours - 1 / bare) * 1e6
    return Result(
        f"otlp span() vs raw SDK span (+{added_us:.1f} µs/span over a bare call, "
        f"bare {bare:,.0f}/s)",
        ours,
        sdk,
        "spans/s",
        ">= 0.8x raw SDK",
        ours >= 0.8 * sdk,
        number=",.0f",
    )


BENCHMARKS = (bench_noop, bench_otlp)
