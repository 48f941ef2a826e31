"""Flag benchmarks: evaluations per second of the ``static`` adapter, against the plain
Python that does the same job, measured in the same run.

* **simple**: ``flag.enabled("beta")`` on a flag that is on (file not reloaded) against
  ``flags.get("beta", False)`` on a dict. The issue asks for the figure (flag
  evaluations/s); the line's target is 1,000,000 evaluations/s.
* **rollout**: ``flag.enabled("beta", subject=..., tenant=...)`` on a 50 % rollout with
  tenant overrides, against the raw computation (a dict lookup plus the SHA-256 bucket
  with ``hashlib``). Target: at least 0.8x the raw rate.
* **reload on**: what ``static.reload`` adds to the simple evaluation (one clock read per
  evaluation, one ``stat`` per second), in nanoseconds, from the rates with reload on and
  off. Target: under 100 ns.

Runs of both sides are interleaved and the best of several repeats is kept.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from bench._measure import best_interleaved
from bench.foundation import Result

FLAGS = {
    "beta": True,
    "rollout": {"rollout": 50, "tenants": {"acme": True, "globex": False}},
}
SUBJECTS = [f"user-{i}" for i in range(1000)]


def _flag(reload: bool = False):
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    directory = Path(tempfile.mkdtemp(prefix="toolkit-bench-flag-"))
    path = directory / "flags.json"
    path.write_text(json.dumps({"flags": FLAGS}), encoding="utf-8")
    block = {"adapter": "static", "options": {"static": {"path": str(path), "reload": reload}}}
    return Container(Config.load({"flag": block}, {})).flag()


def bench_simple() -> Result:
    """Time ``enabled("beta")`` against a dict lookup."""
    enabled = _flag().enabled
    plain = {"beta": True}

    def ours(rounds: int) -> None:
        for _ in range(rounds):
            for _s in SUBJECTS:
                enabled("beta")

    def base(rounds: int) -> None:
        get = plain.get
        for _ in range(rounds):
            for _s in SUBJECTS:
                get("beta", False)

    mine, theirs = best_interleaved(ours, base, 50, per_unit=len(SUBJECTS))
    return Result(
        f"static flag enabled() vs dict lookup ({mine / theirs:.2f}x)",
        mine,
        theirs,
        "evals/s",
        ">= 1,000,000 evals/s",
        mine >= 1_000_000,
        number=",.0f",
    )


def bench_rollout() -> Result:
    """Time a rollout evaluation with subject and tenant against the raw hash."""
    enabled = _flag().enabled
    rules = {"rollout": 50_000_000}
    sha256 = hashlib.sha256

    def ours(rounds: int) -> None:
        for _ in range(rounds):
            for subject in SUBJECTS:
                enabled("rollout", subject=subject, tenant="initech")

    def base(rounds: int) -> None:
        for _ in range(rounds):
            for subject in SUBJECTS:
                bound = rules.get("rollout")
                digest = sha256(f"rollout.{subject}".encode()).digest()
                int.from_bytes(digest, "big") % 100_000_000 < bound  # noqa: B015

    mine, theirs = best_interleaved(ours, base, 10, per_unit=len(SUBJECTS))
    return Result(
        f"static flag rollout enabled() vs dict + hashlib bucket ({mine / theirs:.2f}x)",
        mine,
        theirs,
        "evals/s",
        ">= 0.8x",
        mine >= 0.8 * theirs,
        number=",.0f",
    )


def bench_reload() -> Result:
    """Time what ``static.reload`` adds to ``enabled("beta")``."""
    reloading = _flag(reload=True).enabled
    fixed = _flag(reload=False).enabled

    def ours(rounds: int) -> None:
        for _ in range(rounds):
            for _s in SUBJECTS:
                reloading("beta")

    def base(rounds: int) -> None:
        for _ in range(rounds):
            for _s in SUBJECTS:
                fixed("beta")

    mine, theirs = best_interleaved(ours, base, 50, per_unit=len(SUBJECTS))
    added_ns = (1 / mine - 1 / theirs) * 1e9
    return Result(
        f"static flag reload on: added cost per evaluation ({mine:,.0f} vs {theirs:,.0f} evals/s)",
        added_ns,
        None,
        "ns",
        "< 100 ns",
        added_ns < 100,
    )


BENCHMARKS = (bench_simple, bench_rollout, bench_reload)
