"""The ``toolkit`` program's start-up and its ``check`` on a 500-entity schema.

Every figure is the median wall time of fresh processes, so it includes the interpreter's
own start. The baselines run in the same session: ``python -c pass`` (the floor any Python
CLI pays) and ``django-admin --version`` (what a Django user's own tool costs). For
``check``, the baseline is the same check through the library in this process, so the
ratio is the price of the program around it (start-up, discovery, output).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.foundation import Result
from bench.schema_gen import big_schema_text

BIN = Path(sys.executable).parent
RUNS = 15


def _median_ms(argv: list[str], runs: int = RUNS, cwd: str | None = None) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, cwd=cwd, stdin=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _startup(flag: str) -> Result:
    python_floor = _median_ms([sys.executable, "-c", "pass"])
    django_admin = _median_ms([str(BIN / "django-admin"), "--version"])
    value = _median_ms([str(BIN / "toolkit"), flag])
    result = Result(
        f"toolkit {flag} cold start (vs python -c pass)",
        value,
        python_floor,
        "ms",
        "< 200 ms",
        value < 200,
    )
    print(f"  django-admin --version in the same run: {django_admin:.1f} ms", flush=True)
    return result


def bench_help() -> Result:
    """``toolkit --help`` wall time, fresh process each run."""
    return _startup("--help")


def bench_version() -> Result:
    """``toolkit --version`` wall time, fresh process each run."""
    return _startup("--version")


def bench_check_500() -> Result:
    """``toolkit check`` on a 500-entity / 100-service schema against the library call."""
    from toolkit_codegen import check_paths

    with tempfile.TemporaryDirectory() as tmp:
        schema = Path(tmp) / "schema"
        schema.mkdir()
        (schema / "big.toolkit").write_text(big_schema_text(entities=500, services=100))
        library = []
        for _ in range(3):
            start = time.perf_counter()
            check_paths([schema])
            library.append((time.perf_counter() - start) * 1000)
        value = _median_ms([str(BIN / "toolkit"), "check", str(schema)], runs=3)
    return Result(
        "toolkit check, 500 entities (vs library in-process)",
        value / 1000,
        statistics.median(library) / 1000,
        "s",
        "< 2 s",
        value < 2000,
    )


BENCHMARKS = (bench_help, bench_version, bench_check_500)
