"""The ``router`` battery's Django app (label ``toolkit_router``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class RouterConfig(BatteryConfig):
    """The router battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.router"
