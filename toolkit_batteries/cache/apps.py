"""The ``cache`` battery's Django app (label ``toolkit_cache``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class CacheConfig(BatteryConfig):
    """The cache battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.cache"
