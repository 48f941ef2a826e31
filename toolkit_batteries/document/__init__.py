"""The ``document`` battery: HTML, Django templates or LaTeX rendered to PDF or page images.

Get the configured service from the registry (``services.document()``) or a container;
pick ``local`` (the default: WeasyPrint in renderer processes), ``remote`` (a rendering
service over HTTP, Gotenberg's wire format) or ``latex`` (``pdflatex`` in a sandbox) in
settings. Every render is bounded by ``timeout`` and ``max_output_bytes``; no adapter
fetches a URL the document names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Document,
        DocumentError,
        DocumentTimeoutError,
        DocumentTooLargeError,
        InvalidDocumentError,
        Rendered,
        RenderFailedError,
        UnsafeSourceError,
    )
    from .latexscan import latex_escape

__all__ = [
    "Document",
    "DocumentError",
    "DocumentTimeoutError",
    "DocumentTooLargeError",
    "InvalidDocumentError",
    "RenderFailedError",
    "Rendered",
    "UnsafeSourceError",
    "latex_escape",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Document": "base",
    "DocumentError": "base",
    "DocumentTimeoutError": "base",
    "DocumentTooLargeError": "base",
    "InvalidDocumentError": "base",
    "RenderFailedError": "base",
    "Rendered": "base",
    "UnsafeSourceError": "base",
    "latex_escape": "latexscan",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
