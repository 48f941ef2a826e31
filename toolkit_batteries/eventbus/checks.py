"""System checks of the ``eventbus`` battery (``manage.py check``).

* ``toolkit_eventbus.E001`` (from :class:`~toolkit_batteries.core.apps.BatteryConfig`):
  an instance's adapter does not resolve.
* ``toolkit_eventbus.E002``: a setting is out of range (``buffer_size`` or
  ``max_handlers`` below 1, a non-positive timeout); opening would fail the same way.
* ``toolkit_eventbus.W001``: ``kvserver.url`` is set; it is reserved and ignored.

Messages name the instance and the field, never the value.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.core import checks

from toolkit_batteries.core.checks import reserved_kv_url_warning, resolved_instances
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError

from .base import settings_from_options

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> Iterator[checks.CheckMessage]:
    """Check every ``eventbus`` instance's settings and its ``kvserver`` block."""
    for cfg, adapter in resolved_instances(config, "eventbus"):
        try:
            settings_from_options(cfg.options, instance=cfg.instance)
        except InvalidOptionsError as exc:
            yield checks.Error(
                str(exc),
                hint="buffer_size and max_handlers must be at least 1; timeouts positive",
                obj=_OBJ,
                id="toolkit_eventbus.E002",
            )
            continue
        if adapter == "kvserver" and (
            warning := reserved_kv_url_warning(
                f"eventbus.{cfg.instance}",
                cfg.options.kvserver,
                hint="set kvserver.addr (host:port or a redis:// URL) instead",
                check_id="toolkit_eventbus.W001",
            )
        ):
            yield warning
