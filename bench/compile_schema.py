"""Schema front-end benchmarks: parse + resolve + validate, and fmt, on a big schema.

The schema is ``bench.schema_gen.big_schema_text(500, 100)`` (500 entities, 100 services,
500 rpcs; about 390 KB in one file). The baseline, measured in the same run on the same
text, is a bare regular-expression tokenisation (the lexer pass alone), so the ratio says
what parsing into nodes and resolving names cost on top of reading the characters.
Target (issue 3): the whole front end under 2 s.

Figures are CPU time of this process (``time.process_time``): the compile is
single-threaded, and CPU time stays meaningful on a machine busy with other work, where
wall-clock time would measure the neighbours.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from functools import cache

from bench.foundation import Result
from bench.schema_gen import big_schema_text

ENTITIES, SERVICES = 500, 100
RUNS = 3
_TOKENS = re.compile(r'//[^\n]*|"(?:[^"\\\n]|\\.)*"?|[A-Za-z_]\w*|\d+(?:\.\d+)?|->|\S|\s+')


def _median_ms(work: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


@cache
def _text() -> str:
    return big_schema_text(ENTITIES, SERVICES)


@cache
def _tokenise_ms() -> float:
    text = _text()
    return _median_ms(lambda: sum(1 for _ in _TOKENS.finditer(text)))


def bench_load_sources() -> Result:
    """Time ``load_sources`` (lex, parse, build nodes, resolve, validate) on the big schema."""
    from toolkit_codegen.compiler import load_sources

    sources = {"app.toolkit": _text()}
    res = load_sources(sources)  # warm: builds the grammar once, as a long process has
    assert res.ok, res.diagnostics[:3]
    value = _median_ms(lambda: load_sources(sources))
    name = f"load_sources {ENTITIES} entities / {SERVICES} services (CPU)"
    return Result(name, value, _tokenise_ms(), "ms", "< 2000 ms", value < 2000)


def bench_format() -> Result:
    """Time ``format_source`` (parse + print back) on the same schema."""
    from toolkit_codegen.format import format_source

    text = _text()
    format_source(text, "app.toolkit")
    value = _median_ms(lambda: format_source(text, "app.toolkit"))
    name = f"fmt {ENTITIES} entities / {SERVICES} services (CPU)"
    return Result(name, value, _tokenise_ms(), "ms", "< 2000 ms", value < 2000)


BENCHMARKS = (bench_load_sources, bench_format)


if __name__ == "__main__":  # pragma: no cover - manual run
    for bench in BENCHMARKS:
        print(bench().line())
