"""Behaviour check of ``router``; every ID is in docs/batteries/router.md, "Checks".

``E003``: ``router_a`` without the ``asgi`` extra. Nothing is imported or connected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import error, resolved_instances

from .adapters.router_a import workers_installed

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``router`` instance's ``app_name`` and its server's extra."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "router"):
        if adapter == "router_a" and not workers_installed():
            found.append(
                error(
                    "toolkit_router.E003",
                    f'router.{cfg.instance}: adapter "router_a" needs the uvicorn workers',
                    'pip install "django-toolkit[asgi]"',
                )
            )
    return found
