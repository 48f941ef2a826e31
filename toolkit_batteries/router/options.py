"""Options of the ``router`` service (HTTP routing)."""

from __future__ import annotations

from toolkit_batteries.core.options import option, options_class

__all__ = ["RouterOptions"]


@options_class
class RouterOptions:
    """Options of ``router``; adapters ``stdhttp`` (default) and ``router_a``."""

    app_name: str = option("app", doc="application name used by adapters")
