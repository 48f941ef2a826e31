"""The ``geo`` battery's Django app (label ``toolkit_geo``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class GeoConfig(BatteryConfig):
    """The geo battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.geo"
