"""The ``cdn`` battery's Django app (label ``toolkit_cdn``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class CDNConfig(BatteryConfig):
    """The cdn battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.cdn"
