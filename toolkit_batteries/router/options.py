"""Options of the ``router`` service (HTTP routing)."""

from __future__ import annotations

from toolkit_batteries.core.option_kinds import opens
from toolkit_batteries.core.options import option, options_class

__all__ = ["RouterOptions"]


@options_class
class RouterOptions:
    """Options of ``router``; adapters ``stdhttp`` (default) and ``router_a``."""

    __checks__ = (
        opens(
            "toolkit_router.E002", "toolkit_batteries.router.base:check_app_name", hint="e.g. app"
        ).on("app_name"),
    )

    app_name: str = option("app", doc="application name used by adapters")
