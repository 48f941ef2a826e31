"""The ``resilience`` battery's Django app (label ``toolkit_resilience``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class ResilienceConfig(BatteryConfig):
    """The resilience battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.resilience"
