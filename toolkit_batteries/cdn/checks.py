"""System checks of the ``cdn`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_cdn.E001`` (each instance's adapter resolves):

* ``toolkit_cdn.E002``: ``cdn_a`` without an ``api_token``, or with a ``zone_id`` that
  is missing or not alphanumeric.
* ``toolkit_cdn.E003``: ``cdn_a`` with a ``base_url`` that is not an https URL (http
  without ``allow_insecure``), carries credentials, a query or a fragment, or is a
  literal private/loopback address without ``allow_private``.
* ``toolkit_cdn.W001``: the ``noop`` adapter with ``api_token`` or ``zone_id`` set: purges
  are discarded although a provider seems intended.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import check_url

from .base import ZONE_ID

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``cdn`` instance's token, zone and API root."""
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "cdn"):
        where, options = f"cdn.{cfg.instance}", cfg.options
        if adapter == "noop":
            for field in ("api_token", "zone_id"):
                if getattr(options, field):
                    found.append(
                        checks.Warning(
                            f'{where}: option "{field}" is set but the noop adapter discards '
                            "every purge",
                            hint='set "adapter": "cdn_a" to purge the provider\'s cache',
                            obj=_OBJ,
                            id="toolkit_cdn.W001",
                        )
                    )
        elif adapter == "cdn_a":
            found.extend(_provider_checks(where, cfg.instance, options))
    return found


def _provider_checks(where: str, instance: str, options) -> list[checks.CheckMessage]:
    found: list[checks.CheckMessage] = []
    zone = (options.zone_id or "").strip()
    if not (options.api_token or "").strip() or not ZONE_ID.fullmatch(zone):
        found.append(
            checks.Error(
                f'{where}: options "api_token" and "zone_id" (letters and digits) are required '
                "by the cdn_a adapter",
                hint="set CDN__DEFAULT__API_TOKEN and CDN__DEFAULT__ZONE_ID",
                obj=_OBJ,
                id="toolkit_cdn.E002",
            )
        )
    if (options.base_url or "").strip():
        try:
            check_url(
                options.base_url,
                service="cdn",
                field="base_url",
                instance=instance,
                allow_insecure=bool(options.allow_insecure),
                allow_private=bool(options.allow_private),
            )
        except InvalidOptionsError as exc:
            found.append(
                checks.Error(
                    str(exc),
                    hint="base_url is an https:// URL without credentials; allow_insecure "
                    "permits http, allow_private private addresses",
                    obj=_OBJ,
                    id="toolkit_cdn.E003",
                )
            )
    return found
