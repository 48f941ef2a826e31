"""The ``lock`` battery's Django app (label ``toolkit_lock``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class LockConfig(BatteryConfig):
    """The lock battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.lock"
