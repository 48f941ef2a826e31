"""Run every benchmark and print one line each: ``python -m bench.run [name ...]``.

Each module of ``bench/`` that defines ``BENCHMARKS`` (zero-argument callables returning a
result with ``.line()``) is one group; name groups on the command line to run only those.
Every figure is measured in the same run as its baseline, so ratios compare like with like.
"""

from __future__ import annotations

import os
import pkgutil
import sys
from importlib import import_module
from pathlib import Path

import django


def groups() -> list[str]:
    """Return the names of the benchmark modules, sorted (foundation first)."""
    names = [
        info.name
        for info in pkgutil.iter_modules([str(Path(__file__).parent)])
        if info.name not in {"run", "__init__"} and not info.name.startswith("_")
    ]
    return sorted(names, key=lambda n: (n != "foundation", n))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; exit 0 even when a target is missed (a report, not a test)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    wanted = set(argv if argv is not None else sys.argv[1:])
    if "--scale" in wanted:
        # The full curves (bench/_curves.py): 1M documents, 200k vectors, ...
        wanted.discard("--scale")
        os.environ["TOOLKIT_BENCH_SCALE"] = "1"
    for name in groups():
        if wanted and name not in wanted:
            continue
        module = import_module(f"bench.{name}")
        for bench in getattr(module, "BENCHMARKS", ()):
            try:
                print(f"[{name}] {bench().line()}", flush=True)
            except Exception as exc:  # a broken benchmark must not hide the others
                print(f"[{name}] {getattr(bench, '__name__', bench)}: FAILED {exc!r}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
