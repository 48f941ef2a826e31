"""Pictures of a schema for ``toolkit graph``: Mermaid text, a layered SVG, and PNG from it.

Everything here is pure Python except :mod:`.png`, which needs the ``graph`` extra
(``cairosvg``, over the system's libcairo). The modules are imported only by the ``graph``
command, never by ``toolkit --help``.
"""

from __future__ import annotations

__all__ = ["mermaid", "png", "svg"]
