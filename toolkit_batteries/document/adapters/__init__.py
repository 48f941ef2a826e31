"""The document adapters, by canonical name (default first, as in the catalog).

Values are dotted paths, imported only when an adapter opens, so WeasyPrint and httpx
cost nothing at start-up. Aliases name the tools: ``weasyprint`` is ``local``,
``gotenberg`` is ``remote`` (``gotenberg.py: GotenbergDocument``), ``pdflatex`` and
``tex`` are ``latex``.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "local": "toolkit_batteries.document.adapters.local.LocalDocument",
    "remote": "toolkit_batteries.document.adapters.gotenberg.GotenbergDocument",
    "latex": "toolkit_batteries.document.adapters.latex.LatexDocument",
}

#: Battery-specific aliases (alias -> canonical).
ALIASES: dict[str, str] = {
    "weasyprint": "local",
    "gotenberg": "remote",
    "pdflatex": "latex",
    "tex": "latex",
}
