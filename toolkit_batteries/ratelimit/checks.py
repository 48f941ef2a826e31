"""System checks of the ``ratelimit`` battery (``manage.py check``).

* ``toolkit_ratelimit.E001`` (from :class:`~toolkit_batteries.core.apps.BatteryConfig`):
  an instance's adapter does not resolve.
* ``toolkit_ratelimit.E002``: a limit is out of range (``rate`` not above 0, ``burst``
  or ``max_entries`` below 1, a non-positive duration); opening would fail the same way.
* ``toolkit_ratelimit.W001``: ``kvserver.url`` is set; it is reserved and ignored, so the
  adapter connects to ``kvserver.addr`` instead.

Messages name the instance and the field, never the value.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.core import checks

from toolkit_batteries.core.checks import reserved_kv_url_warning, resolved_instances
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError

from .base import limits_from_options

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> Iterator[checks.CheckMessage]:
    """Check every ``ratelimit`` instance's limits and its ``kvserver`` block."""
    for cfg, adapter in resolved_instances(config, "ratelimit"):
        try:
            limits_from_options(cfg.options, instance=cfg.instance)
        except InvalidOptionsError as exc:
            yield checks.Error(
                str(exc),
                hint="rate must be above 0; burst and max_entries at least 1; durations positive",
                obj=_OBJ,
                id="toolkit_ratelimit.E002",
            )
        if adapter == "kvserver" and (
            warning := reserved_kv_url_warning(
                f"ratelimit.{cfg.instance}",
                cfg.options.kvserver,
                hint="set kvserver.addr (host:port or a redis:// URL) instead",
                check_id="toolkit_ratelimit.W001",
            )
        ):
            yield warning
