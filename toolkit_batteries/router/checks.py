"""System checks of the ``router`` battery (``manage.py check``).

After :class:`~toolkit_batteries.core.apps.BatteryConfig`'s own ``toolkit_router.E001``:

* ``toolkit_router.E002``: ``app_name`` is not a URL namespace.
* ``toolkit_router.E003``: ``router_a`` without the ``asgi`` extra (uvicorn workers).

Messages name instances and fields, never values. Nothing is imported or connected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances

from .adapters.router_a import workers_installed

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``router`` instance's ``app_name`` and its server's extra."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "router"):
        if adapter == "router_a" and not workers_installed():
            found.append(
                checks.Error(
                    f'router.{cfg.instance}: adapter "router_a" needs the uvicorn workers',
                    hint='pip install "django-toolkit[asgi]"',
                    obj=_OBJ,
                    id="toolkit_router.E003",
                )
            )
    return found
