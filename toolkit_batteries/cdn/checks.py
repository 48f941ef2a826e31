"""System checks of the ``cdn`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

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

from .base import ZONE_ID

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``cdn_a`` instance has a token and a well-formed zone id."""
    return [
        checks.Error(
            f'cdn.{cfg.instance}: options "api_token" and "zone_id" (letters and digits) are '
            "required by the cdn_a adapter",
            hint="set CDN__DEFAULT__API_TOKEN and CDN__DEFAULT__ZONE_ID",
            obj=_OBJ,
            id="toolkit_cdn.E002",
        )
        for cfg, adapter in resolved_instances(config, "cdn")
        if adapter == "cdn_a"
        and (
            not (cfg.options.api_token or "").strip()
            or not ZONE_ID.fullmatch((cfg.options.zone_id or "").strip())
        )
    ]
