"""The ``latex`` adapter: LaTeX source to PDF with ``pdflatex``, sandboxed.

Each render runs in a fresh temporary directory (under ``tmp_dir`` when set) holding
``doc.tex`` and the render's assets, and calls the compiler (``latex_command``, default
``pdflatex``; ``xelatex`` and ``lualatex`` take the same flags) as::

    <latex_command> -no-shell-escape -interaction=nonstopmode -halt-on-error doc.tex

with a cleared environment where kpathsea's ``openin_any=p`` and ``openout_any=p`` refuse
absolute and ``..`` paths whatever the source computes. The compiler runs again while its
log asks for it (cross-references), at most ``latex_runs`` times (0: three). The whole
render is bounded by ``timeout`` (the process group is killed) and the directory by
``max_output_bytes``.

**Pre-scan** (:mod:`..latexscan`): shell escape, absolute or ``..`` file arguments and
the primitives that hide commands are refused before anything runs, unless
``latex_allow_unsafe_source`` (trusted sources only; logged at open).

**Sandbox** (``latex_sandbox``, :mod:`..sandbox`): ``required`` runs the compiler under
bubblewrap (``bwrap``: Debian's ``bubblewrap``) with every namespace unshared (no
network), only the TeX tree kpathsea reports, the compiler's own libraries and the system
fonts read-only, and the render's directory writable; it fails the open with a clear
``InvalidOptionsError`` when ``bwrap`` cannot sandbox the compiler on this machine.
``auto`` (default) is ``required`` outside development; in development (``TOOLKIT_ENV``
``dev``, ``test`` or ``development``) it sandboxes when ``bwrap`` works and otherwise runs
unsandboxed, logging a warning. ``off`` never sandboxes (logged at open outside
development). Never a silent fallback.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

from toolkit_batteries.auth.policy import development_switch
from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.tracing import traced

from ..base import Document, RenderFailedError
from ..latexscan import scan, scan_assets
from ..process import run_bounded
from ..sandbox import sandbox_args, sandbox_problem

__all__ = ["DEFAULT_RUNS", "LatexDocument", "sandbox_problem"]

logger = logging.getLogger("toolkit.document")

#: Compiler passes when ``latex_runs`` is 0, and the most accepted.
DEFAULT_RUNS = 3
MAX_RUNS = 10
FLAGS = ("-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error")

_RERUN = re.compile(
    r"Rerun to get|Label\(s\) may have changed|Please rerun LaTeX|Rerun LaTeX|"
    r"\(rerunfilecheck\)\s+Rerun"
)
_PAGES = re.compile(r"Output written on \S+ \((\d+) pages?")


@traced("render")
class LatexDocument(Document):
    """LaTeX to PDF with the configured compiler; page images with pdftoppm."""

    adapter_name = "latex"
    source_language = "latex"

    def __init__(self, options: Any, *, instance: str = "default") -> None:
        """Resolve the compiler, the pass bound and the sandbox; raise on bad options."""
        super().__init__(options, instance=instance)

        def invalid(field: str, reason: str) -> InvalidOptionsError:
            return InvalidOptionsError("document", field, reason, instance=instance)

        argv = shlex.split(options.latex_command or "pdflatex")
        program = shutil.which(argv[0]) if argv else None
        if program is None:
            raise invalid(
                "latex_command", "names a program that is not installed (texlive-latex-base)"
            )
        self.command = [program, *argv[1:]]
        runs = int(options.latex_runs or 0)
        if not 0 <= runs <= MAX_RUNS:
            raise invalid("latex_runs", f"must be between 0 and {MAX_RUNS}")
        self.runs = runs or DEFAULT_RUNS
        self.allow_unsafe_source = bool(options.latex_allow_unsafe_source)
        self.sandboxed = self._resolve_sandbox(options, invalid)
        if self.allow_unsafe_source:
            logger.warning(
                "document.%s: latex_allow_unsafe_source is on: the source pre-scan is off",
                instance,
            )

    def _resolve_sandbox(self, options: Any, invalid: Any) -> bool:
        """Decide whether renders run under bwrap; raise when a required sandbox cannot.

        ``auto`` means ``required`` outside development: a production host where
        bubblewrap cannot start fails at open instead of rendering unsandboxed.
        """
        mode = (options.latex_sandbox or "auto").strip().lower()
        development = development_switch()
        if mode == "off":
            if not development:
                logger.warning(
                    "document.%s: latex_sandbox is off: the compiler sees the whole machine",
                    self.instance,
                )
            return False
        problem = sandbox_problem(program=self.command[0])
        if problem and (mode == "required" or not development):
            why = "is required" if mode == "required" else "is auto, which outside development"
            hint = "" if mode == "required" else " is required,"
            raise invalid("latex_sandbox", f"{why}{hint} but {problem}")
        if problem:
            logger.warning(
                "document.%s: latex runs unsandboxed (latex_sandbox auto, development): %s",
                self.instance,
                problem,
            )
        return not problem

    @classmethod
    def open(cls, ctx: OpenContext) -> LatexDocument:
        return cls(ctx.options, instance=ctx.instance)

    def _argv(self, work: Path) -> tuple[list[str], dict[str, str] | None]:
        """Return the compiler's argv and environment (``None``: bwrap sets it)."""
        settings = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": "/work" if self.sandboxed else str(work),
            "LANG": "C.UTF-8",
            "openin_any": "p",
            "openout_any": "p",
            "shell_escape": "f",
        }
        compile_argv = [*self.command, *FLAGS, "doc.tex"]
        if not self.sandboxed:
            return compile_argv, settings
        bwrap = shutil.which("bwrap") or "bwrap"
        args = [bwrap, *sandbox_args(work, self.command[0])]
        for key, value in settings.items():
            args += ["--setenv", key, value]
        return [*args, *compile_argv], None

    def _render_pdf(
        self, source: str, assets: dict[str, bytes], deadline: float
    ) -> tuple[bytes, int | None]:
        if not self.allow_unsafe_source:
            scan(source, self.instance)
            scan_assets(assets, self.instance)
        self._left(deadline, "compiling")
        with tempfile.TemporaryDirectory(prefix="toolkit-document-", dir=self.tmp_dir) as tmp:
            work = Path(tmp, "job")
            work.mkdir()
            for name, data in assets.items():
                target = work / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            (work / "doc.tex").write_text(source, encoding="utf-8")
            argv, env = self._argv(work)
            log_path, pdf_path = work / "doc.log", work / "doc.pdf"
            log = ""
            for _ in range(self.runs):
                finished = run_bounded(
                    argv,
                    cwd=work,
                    deadline=deadline,
                    max_bytes=self.max_output_bytes,
                    instance=self.instance,
                    what="the LaTeX compiler",
                    timeout_seconds=self.timeout,
                    env=env,
                )
                log = log_path.read_text("utf-8", "replace") if log_path.exists() else ""
                if finished.returncode != 0 or not pdf_path.exists():
                    name = os.path.basename(self.command[0])
                    raise RenderFailedError(
                        self.instance,
                        f"{name} failed (exit {finished.returncode})",
                        _first_error(log or finished.output.decode("utf-8", "replace")),
                    )
                if not _RERUN.search(log):
                    break
            pdf = pdf_path.read_bytes()
        self._check_size(len(pdf))
        pages = _PAGES.search(log)
        return pdf, int(pages.group(1)) if pages else None

    def ping(self) -> None:
        """Nothing to reach: the compiler was found at open."""


def _first_error(log: str) -> str:
    """Return the log's first ``! ...`` error line (at most 200 characters)."""
    for line in log.splitlines():
        if line.startswith("!"):
            return line[:200]
    for line in log.splitlines():
        if "openin_any" in line or "openout_any" in line:
            return line.strip()[:200]
    return ""
