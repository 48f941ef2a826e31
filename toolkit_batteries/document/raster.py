"""PDF to page images through ``pdftoppm`` (poppler-utils), for every adapter.

WeasyPrint stopped writing PNG in version 53 and a rendering service answers PDF, so one
rasteriser serves all adapters: the ``latex_pdf_to_ppm`` command (default ``pdftoppm``;
the option keeps the spec's name), run with ``-r <dpi>`` and ``-png`` or
``-jpeg -jpegopt quality=<quality>``, within the render's deadline and with its output
directory bounded by ``max_output_bytes``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tempfile
from pathlib import Path

from .base import DocumentTooLargeError, RenderFailedError
from .process import run_bounded

__all__ = ["converter_argv", "rasterize"]

_PAGE = re.compile(r"page-(\d+)\.(?:png|jpg)")


def converter_argv(command: str, instance: str) -> list[str]:
    """Return ``command`` split into an argv whose program exists, or raise.

    Raises :class:`~toolkit_batteries.core.errors.InvalidOptionsError` naming
    ``latex_pdf_to_ppm`` (never its value) when it is empty or not found on ``PATH``.
    """
    from toolkit_batteries.core.errors import InvalidOptionsError

    argv = shlex.split(command or "")
    if not argv or shutil.which(argv[0]) is None:
        raise InvalidOptionsError(
            "document",
            "latex_pdf_to_ppm",
            "names a program that is not installed (install poppler-utils for pdftoppm)",
            instance=instance,
        )
    return argv


def rasterize(
    pdf: bytes,
    fmt: str,
    *,
    command: str,
    dpi: int,
    quality: int,
    max_bytes: int,
    deadline: float,
    timeout: float,
    tmp_dir: str | None,
    instance: str,
) -> list[bytes]:
    """Return one ``fmt`` image (``png`` or ``jpeg``) per page of ``pdf``, in page order."""
    argv = converter_argv(command, instance)
    with tempfile.TemporaryDirectory(prefix="toolkit-document-", dir=tmp_dir) as work:
        root = Path(work)
        (root / "in.pdf").write_bytes(pdf)
        out = root / "pages"
        out.mkdir()
        kind = ["-png"] if fmt == "png" else ["-jpeg", "-jpegopt", f"quality={quality}"]
        finished = run_bounded(
            [*argv, "-r", str(dpi), *kind, "-forcenum", "-sep", "-", "in.pdf", "pages/page"],
            cwd=root,
            watch=out,
            deadline=deadline,
            max_bytes=max_bytes,
            instance=instance,
            what="rasterising",
            timeout_seconds=timeout,
        )
        if finished.returncode != 0:
            raise RenderFailedError(
                instance, f"the PDF-to-image converter failed (exit {finished.returncode})"
            )
        numbered = []
        for path in out.iterdir():
            match = _PAGE.fullmatch(path.name)
            if match:
                numbered.append((int(match.group(1)), path))
        numbered.sort()
        images: list[bytes] = []
        total = 0
        for _, path in numbered:
            total += path.stat().st_size
            if total > max_bytes:
                raise DocumentTooLargeError(instance, "the page images passed max_output_bytes")
            images.append(path.read_bytes())
    if not images:
        raise RenderFailedError(instance, "the PDF-to-image converter wrote no page")
    return images
