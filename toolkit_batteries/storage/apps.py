"""The ``storage`` battery's Django app (label ``toolkit_storage``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class StorageConfig(BatteryConfig):
    """The storage battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.storage"
