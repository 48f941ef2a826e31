"""Open the document battery the real way (configuration, then a Container) on every adapter.

``local`` renders with WeasyPrint in its renderer processes; ``remote`` talks to
:class:`~tests.batteries.document.server.RenderServer`, a Gotenberg-style service started
on 127.0.0.1 for the test (``allow_private`` and ``allow_insecure`` set for the test
only); ``latex`` runs the machine's ``pdflatex`` (Debian ``texlive-latex-base``), in the
bubblewrap sandbox. PDFs are read back with poppler's ``pdfinfo`` and ``pdftotext``.
"""

from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .server import RenderServer

VARIANTS = ("local", "remote", "latex")


def open_document(block: dict[str, Any]) -> tuple[Container, Any]:
    """Open ``TOOLKIT["document"] = block`` in a new container; return it and the service."""
    container = Container(Config.load({"document": block}, {}))
    return container, container.document()


def remote_block(server: RenderServer, **options: Any) -> dict[str, Any]:
    """Return the block of a remote instance on ``server`` (test-only allowances)."""
    return {
        "adapter": "remote",
        "options": {
            "endpoint": server.url,
            "allow_insecure": True,
            "allow_private": True,
            **options,
        },
    }


def html_source(pages: list[str]) -> str:
    """Return an HTML document with one paragraph per page."""
    body = (
        "".join(f'<p style="page-break-after: always">{text}</p>' for text in pages[:-1])
        + f"<p>{pages[-1]}</p>"
    )
    return f"<!doctype html><html><body>{body}</body></html>"


def latex_source(pages: list[str]) -> str:
    """Return a LaTeX document with one paragraph per page."""
    body = "\n\\newpage\n".join(pages)
    return "\\documentclass{article}\n\\begin{document}\n" + body + "\n\\end{document}\n"


def pdf_pages(pdf: bytes) -> int:
    """Return the page count poppler's ``pdfinfo`` reads from ``pdf``."""
    with tempfile.NamedTemporaryFile(suffix=".pdf") as handle:
        handle.write(pdf)
        handle.flush()
        info = subprocess.run(
            ["pdfinfo", handle.name], capture_output=True, text=True, check=True, timeout=30
        ).stdout
    match = re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE)
    assert match, info
    return int(match.group(1))


def pdf_text(pdf: bytes) -> str:
    """Return the text poppler's ``pdftotext`` extracts from ``pdf``."""
    with tempfile.NamedTemporaryFile(suffix=".pdf") as handle:
        handle.write(pdf)
        handle.flush()
        return subprocess.run(
            ["pdftotext", handle.name, "-"], capture_output=True, text=True, check=True, timeout=30
        ).stdout


def png_size(data: bytes) -> tuple[int, int]:
    """Return a PNG's ``(width, height)`` from its IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@dataclass
class Opened:
    """An opened document service, its container and how to write its source language."""

    variant: str
    document: Any
    container: Container
    server: RenderServer | None

    def source(self, pages: list[str]) -> str:
        return latex_source(pages) if self.variant == "latex" else html_source(pages)


@pytest.fixture
def server() -> Iterator[RenderServer]:
    with RenderServer() as running:
        yield running


def variant_block(variant: str, request: pytest.FixtureRequest, **options: Any) -> tuple[dict, Any]:
    """Return ``(block, server)`` for ``variant`` with ``options``."""
    if variant == "remote":
        running = request.getfixturevalue("server")
        return remote_block(running, **options), running
    if variant == "latex":
        options.setdefault("latex_sandbox", "required")
    return {"adapter": variant, "options": options}, None


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    block, running = variant_block(request.param, request)
    container, document = open_document(block)
    try:
        yield Opened(request.param, document, container, running)
    finally:
        container.close()


@pytest.fixture
def make(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Return ``make(variant, **options) -> Opened``; every container is closed afterwards."""
    containers: list[Container] = []

    def build(variant: str, **options: Any) -> Opened:
        block, running = variant_block(variant, request, **options)
        container, document = open_document(block)
        containers.append(container)
        return Opened(variant, document, container, running)

    yield build
    for container in containers:
        container.close()
