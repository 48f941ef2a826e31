"""Document benchmarks: each adapter against the tool underneath, in the same run.

* ``local`` against raw WeasyPrint: both render the same two-page invoice (a styled table
  of 120 rows) to PDF. The battery sends it to its renderer process (a pipe round trip,
  the refusing URL fetcher, the size bound); raw WeasyPrint runs
  ``HTML(string=...).write_pdf()`` in the bench process.
* ``latex`` against raw ``pdflatex``: both compile the same one-page article with the same
  flags in a temporary directory; the battery adds the pre-scan, the log reading and the
  bounded process. Measured twice: ``latex_sandbox`` ``off`` (like for like, target at
  least 0.9x) and ``required`` (bubblewrap adds a fixed 15 to 30 ms per compiler pass to
  start its namespaces, about a tenth of a short compile: target at least 0.8x).

Runs of the two sides alternate and the best round of each is kept, so a busy machine
slows both alike.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from bench._measure import best_interleaved
from bench.foundation import Result

ROWS = "".join(
    f"<tr><td>{i}</td><td>Item number {i}</td><td>{i * 3}.00</td></tr>" for i in range(120)
)
INVOICE = (
    "<!doctype html><html><head><style>"
    "body { font-family: sans-serif; } table { width: 100%; border-collapse: collapse }"
    "td { border: 1px solid #999; padding: 2pt } h1 { color: #234 }"
    "</style></head><body><h1>Invoice 2026-001</h1>"
    f"<table>{ROWS}</table><p>Thank you.</p></body></html>"
)
ARTICLE = (
    "\\documentclass{article}\n\\begin{document}\n\\section{Report}\n"
    + "A paragraph of text for the benchmark. " * 40
    + "\n\\end{document}\n"
)


def _open(block: dict):
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    container = Container(Config.load({"document": block}, {}))
    return container, container.document()


def bench_local() -> Result:
    """Time ``local`` PDF renders against raw WeasyPrint ``write_pdf`` on the same HTML."""
    import weasyprint

    container, document = _open({"adapter": "local"})
    try:

        def ours(n: int) -> None:
            for _ in range(n):
                assert document.pdf(INVOICE).startswith(b"%PDF-")

        def base(n: int) -> None:
            for _ in range(n):
                assert weasyprint.HTML(string=INVOICE).write_pdf().startswith(b"%PDF-")

        ours(2), base(2)  # start the renderer process; warm fonts on both sides
        mine, theirs = best_interleaved(ours, base, 5, repeats=5)
    finally:
        container.close()
    return Result(
        "document local pdf vs raw WeasyPrint",
        mine,
        theirs,
        "docs/s",
        ">= 0.9x",
        mine >= 0.9 * theirs,
    )


def _latex(sandbox: str, target: float) -> Result:
    """Time ``latex`` renders against raw ``pdflatex`` on the same source."""
    container, document = _open({"adapter": "latex", "options": {"latex_sandbox": sandbox}})
    flags = ["-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error"]
    try:

        def ours(n: int) -> None:
            for _ in range(n):
                assert document.pdf(ARTICLE).startswith(b"%PDF-")

        def base(n: int) -> None:
            for _ in range(n):
                with tempfile.TemporaryDirectory() as work:
                    Path(work, "doc.tex").write_text(ARTICLE)
                    subprocess.run(
                        ["pdflatex", *flags, "doc.tex"],
                        cwd=work,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        check=True,
                    )
                    assert Path(work, "doc.pdf").read_bytes().startswith(b"%PDF-")

        ours(1), base(1)
        mine, theirs = best_interleaved(ours, base, 5, repeats=5)
    finally:
        container.close()
    return Result(
        "document latex in bwrap vs raw pdflatex"
        if sandbox == "required"
        else "document latex vs raw pdflatex",
        mine,
        theirs,
        "docs/s",
        f">= {target}x",
        mine >= target * theirs,
    )


def bench_latex() -> Result:
    """Unsandboxed ``latex`` against raw ``pdflatex``: the battery's own overhead."""
    return _latex("off", 0.9)


def bench_latex_sandboxed() -> Result:
    """``latex`` in the bubblewrap sandbox against raw ``pdflatex``."""
    return _latex("required", 0.8)


BENCHMARKS = (bench_local, bench_latex, bench_latex_sandboxed)
