"""The document adapters; WeasyPrint and httpx cost nothing at start-up. ``remote`` is
Gotenberg (``gotenberg.GotenbergDocument``).
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(
    __name__, "local.LocalDocument remote=gotenberg.GotenbergDocument latex.LatexDocument"
)

#: The tools' names (alias -> canonical).
ALIASES: dict[str, str] = {
    "weasyprint": "local",
    "gotenberg": "remote",
    "pdflatex": "latex",
    "tex": "latex",
}
