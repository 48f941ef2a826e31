"""System checks of the ``resilience`` battery (``manage.py check``).

* ``toolkit_resilience.E001`` (from :class:`~toolkit_batteries.core.apps.BatteryConfig`):
  an instance's adapter does not resolve.
* ``toolkit_resilience.E002`` and ``W001`` are shape rules declared on the options.
* ``toolkit_resilience.E002``: a value is out of range (``bulkhead.max_concurrent``,
  ``breaker.max_requests`` or ``breaker.min_requests`` below 1, a non-positive breaker
  duration, a negative retry delay); opening would fail the same way.
* ``toolkit_resilience.W001``: ``kvserver.url`` is set; it is reserved and ignored.
* ``toolkit_resilience.W002``: the ``kvserver`` adapter with ``breaker.enabled`` false:
  only the breaker is shared through the server, so there is nothing to share.

Messages name the instance and the field, never the value.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances
from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> Iterator[checks.CheckMessage]:
    """Warn where the kvserver adapter would share nothing (its breaker is off)."""
    for cfg, adapter in resolved_instances(config, "resilience"):
        if adapter == "kvserver" and not cfg.options.breaker.enabled:
            yield checks.Warning(
                f"resilience.{cfg.instance}: the kvserver adapter shares only the circuit "
                "breaker, and breaker.enabled is false",
                hint="set breaker.enabled to true, or use the memory adapter",
                obj=_OBJ,
                id="toolkit_resilience.W002",
            )
