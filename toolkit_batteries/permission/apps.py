"""The ``permission`` battery's Django app (label ``toolkit_permission``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class PermissionConfig(BatteryConfig):
    """The permission battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.permission"
