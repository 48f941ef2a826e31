"""The ``analytics`` battery's Django app (label ``toolkit_analytics``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class AnalyticsConfig(BatteryConfig):
    """The analytics battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.analytics"
