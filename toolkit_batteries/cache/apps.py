"""The ``cache`` battery's Django app (label ``toolkit_cache``)."""

from __future__ import annotations

import sys
from typing import Any

from toolkit_batteries.core.apps import BatteryConfig

_KVSERVER = "toolkit_batteries.cache.adapters.kvserver"


class CacheConfig(BatteryConfig):
    """The cache battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.cache"

    def ready(self) -> None:
        """Return Redis client leases of dropped backends when ``CACHES`` changes."""
        super().ready()
        from django.core.signals import setting_changed

        setting_changed.connect(_on_setting_changed, dispatch_uid="toolkit_batteries.cache")


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    module = sys.modules.get(_KVSERVER)  # never imports redis-py for a memory cache
    if setting == "CACHES" and module is not None:
        module.release_leases()
