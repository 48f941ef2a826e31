"""System checks of the ``analytics`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_analytics.E001`` (each instance's adapter resolves):

* ``toolkit_analytics.E002``: ``analytics_b`` without an ``api_key``.
* ``toolkit_analytics.E003``: ``analytics_b`` with an ``endpoint`` that is not an https
  URL (http without ``allow_insecure``), carries credentials, a query or a fragment, or
  is a literal private/loopback address without ``allow_private``.
* ``toolkit_analytics.W001``: the ``log`` adapter with ``api_key`` or ``endpoint`` set,
  which it never reads (probably a forgotten ``adapter``).

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import check_url

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``analytics`` instance's key and endpoint."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "analytics"):
        where, options = f"analytics.{cfg.instance}", cfg.options
        if adapter == "log":
            for field in ("api_key", "endpoint"):
                if getattr(options, field):
                    found.append(
                        checks.Warning(
                            f'{where}: option "{field}" is set but the log adapter never reads it',
                            hint='set "adapter": "analytics_b" to send events to the provider',
                            obj=_OBJ,
                            id="toolkit_analytics.W001",
                        )
                    )
            continue
        if adapter != "analytics_b":
            continue
        if not (options.api_key or "").strip():
            found.append(
                checks.Error(
                    f'{where}: option "api_key" is required by the analytics_b adapter',
                    hint="set ANALYTICS__DEFAULT__API_KEY to the project's write key",
                    obj=_OBJ,
                    id="toolkit_analytics.E002",
                )
            )
        if (options.endpoint or "").strip():
            try:
                check_url(
                    options.endpoint,
                    service="analytics",
                    field="endpoint",
                    instance=cfg.instance,
                    allow_insecure=bool(options.allow_insecure),
                    allow_private=bool(options.allow_private),
                )
            except InvalidOptionsError as exc:
                found.append(
                    checks.Error(
                        str(exc),
                        hint="endpoint is an https:// URL without credentials; allow_insecure "
                        "permits http, allow_private private addresses",
                        obj=_OBJ,
                        id="toolkit_analytics.E003",
                    )
                )
    return found
