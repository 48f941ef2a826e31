"""The router adapters; the catalog row maps ``fiber`` (the original toolkit's second
router) to ``router_a``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS = adapter_paths(__name__, "stdhttp.StdHTTPRouter router_a.ASGIRouter")

#: Protocol names as aliases.
ALIASES: dict[str, str] = {"wsgi": "stdhttp", "asgi": "router_a"}
