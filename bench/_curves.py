"""Scale curves: latency percentiles per size, printed as lines and written to the docs.

A curve is a list of :class:`Point` (one size, one side: the toolkit or its raw
baseline). :class:`Line` prints one bench line and says "no target" when there is none
(it never prints ``ok`` for a line without a computed target). :func:`write_section`
replaces the curve's table in ``docs/performance.md`` and, when matplotlib is
installed (the ``dev`` extra), draws ``docs/performance/<name>.png`` beside it.
(The leading underscore keeps this module out of ``python -m bench.run``'s groups.)
"""

from __future__ import annotations

import os
import platform
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Line", "Lines", "Point", "percentiles", "scale_requested", "write_section"]

DOCS = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
PLOTS = DOCS.parent / "performance"


def scale_requested() -> bool:
    """Return whether the full curves were asked for (``--scale`` or ``TOOLKIT_BENCH_SCALE``)."""
    return os.environ.get("TOOLKIT_BENCH_SCALE", "") not in ("", "0")


def percentiles(seconds: list[float]) -> tuple[float, float]:
    """Return (p50, p99) of ``seconds`` in milliseconds."""
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p99 * 1000


@dataclass
class Point:
    """One measured point of a curve: a series (side and case) at one size."""

    series: str
    size: int
    p50_ms: float
    p99_ms: float
    extra: dict[str, str] = field(default_factory=dict)


@dataclass
class Line:
    """One bench line; ``target`` ``None`` prints "no target" and never a pass mark."""

    name: str
    value: float
    baseline: float | None
    unit: str
    target: str | None = None
    met: bool | None = None

    def line(self) -> str:
        """Render the line like :class:`bench.foundation.Result` does."""
        base = f"  baseline {self.baseline:.2f} {self.unit}" if self.baseline is not None else ""
        ratio = f"  ratio {self.value / self.baseline:.2f}x" if self.baseline else ""
        if self.target is None:
            mark, target = "--  ", "no target"
        else:
            mark, target = ("ok  " if self.met else "MISS"), f"target {self.target}"
        return f"{mark} {self.name:<44} {self.value:12.2f} {self.unit}{base}{ratio}  ({target})"


class Lines:
    """Adapt a list of lines to bench.run's one-``line()`` protocol."""

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines

    def line(self) -> str:
        """Render every line, one per row."""
        return "\n".join(item.line() for item in self.lines)


def _machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {load:.1f} when written (other work shared the machine)"
    )


def _table(points: list[Point], columns: list[str]) -> str:
    head = "| series | size | p50 ms | p99 ms |" + "".join(f" {c} |" for c in columns)
    rule = "|---|---:|---:|---:|" + "---:|" * len(columns)
    rows = [
        f"| {p.series} | {p.size:,} | {p.p50_ms:.2f} | {p.p99_ms:.2f} |"
        + "".join(f" {p.extra.get(c, '')} |" for c in columns)
        for p in points
    ]
    return "\n".join([head, rule, *rows])


def _plot(name: str, title: str, points: list[Point], xlabel: str = "size") -> str | None:
    """Draw p50 per series against size (log-log); return the PNG's relative path."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    PLOTS.mkdir(exist_ok=True)
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for series in dict.fromkeys(p.series for p in points):
        mine = sorted((p for p in points if p.series == series), key=lambda p: p.size)
        axes.plot([p.size for p in mine], [p.p50_ms for p in mine], marker="o", label=series)
    axes.set_xscale("symlog" if min(p.size for p in points) == 0 else "log")
    axes.set_yscale("log")
    axes.set_xlabel(xlabel)
    axes.set_ylabel("p50 latency (ms)")
    axes.set_title(title, fontsize=9)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7)
    figure.tight_layout()
    path = PLOTS / f"{name}.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return f"performance/{name}.png"


def write_section(
    name: str,
    title: str,
    points: list[Point],
    notes: str,
    columns: list[str] | None = None,
    xlabel: str = "size",
) -> None:
    """Replace (or add) the ``name`` curve's section of ``docs/performance.md``."""
    png = _plot(name, title, points, xlabel)
    if not scale_requested():
        notes = notes.strip() + (
            "\n\nDefault sizes only: not yet measured at scale (`make bench-scale`)."
        )
    body = [f"### {title}", "", notes.strip(), "", f"Machine: {_machine()}.", ""]
    body.append(_table(points, columns or []))
    if png:
        body += ["", f"![{title}]({png})"]
    section = f"<!-- curve:{name} -->\n" + "\n".join(body) + f"\n<!-- /curve:{name} -->"
    text = DOCS.read_text() if DOCS.exists() else "# Performance at scale\n"
    pattern = re.compile(
        rf"<!-- curve:{re.escape(name)} -->.*?<!-- /curve:{re.escape(name)} -->", re.S
    )
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    DOCS.write_text(text)
