"""Artifact backend benchmarks: ``openapi``, ``sql`` and ``mcp`` over a big schema.

The schema is ``bench.schema_gen.big_schema_text(500, 100)``: 500 entities and 100
services (500 rpcs). The baseline, measured in the same run, is the front end alone
(``load_sources``: parse, resolve, validate), so each ratio says what a backend adds to the
work every compile does anyway. Target (issue 3): the whole compile, front end plus the
three backends, under 2 s; each backend is given a quarter of that budget.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from bench.foundation import Result
from bench.schema_gen import big_schema_text

ENTITIES, SERVICES = 500, 100
BACKENDS = ("openapi", "sql", "mcp")
RUNS = 5


def _median_ms(work: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


@cache
def _prepared() -> tuple[dict[str, str], Any, float]:
    """Return the sources, their loaded schema and the median load time (measured once)."""
    from toolkit_codegen.compiler import load_sources

    sources = {"app.toolkit": big_schema_text(ENTITIES, SERVICES)}
    loaded = load_sources(sources)
    assert loaded.ok, loaded.diagnostics[:3]
    return sources, loaded, _median_ms(lambda: load_sources(sources))


def bench_whole_compile() -> Result:
    """Time load + openapi + sql + mcp against the load alone."""
    from toolkit_codegen.compiler import compile_schema, load_sources

    sources, _, load = _prepared()

    def whole() -> None:
        out = compile_schema(load_sources(sources), BACKENDS)
        assert out.ok, out.diagnostics[:3]

    value = _median_ms(whole)
    name = f"compile {ENTITIES} entities/{SERVICES} services: openapi+sql+mcp"
    return Result(name, value, load, "ms", "< 2000 ms", value < 2000)


def _bench_backend(backend: str) -> Callable[[], Result]:
    def bench() -> Result:
        from toolkit_codegen.backends import BackendOptions, generate

        _, loaded, load = _prepared()
        options = BackendOptions()
        value = _median_ms(lambda: generate(backend, loaded.schema, options))
        name = f"{backend} backend, {ENTITIES} entities/{SERVICES} services"
        return Result(name, value, load, "ms", "< 500 ms", value < 500)

    bench.__name__ = f"bench_{backend}_backend"
    return bench


BENCHMARKS = (bench_whole_compile, *(_bench_backend(b) for b in BACKENDS))
