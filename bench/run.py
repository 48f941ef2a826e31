"""Run every benchmark and print one line each: ``python -m bench.run``."""

from __future__ import annotations

import os
import sys

import django


def main() -> int:
    """Run the benchmarks; exit 0 even when a target is missed (this is a report, not a test)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    from bench import foundation

    for bench in foundation.BENCHMARKS:
        print(bench().line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
