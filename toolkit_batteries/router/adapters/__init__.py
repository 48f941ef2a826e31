"""The router adapters, by canonical name (default first, as in the catalog).

The shared vendor table maps ``fiber`` (the original toolkit's second router) to
``router_a``.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "stdhttp": "toolkit_batteries.router.adapters.stdhttp.StdHTTPRouter",
    "router_a": "toolkit_batteries.router.adapters.router_a.ASGIRouter",
}

#: Protocol names as aliases.
ALIASES: dict[str, str] = {"wsgi": "stdhttp", "asgi": "router_a"}
