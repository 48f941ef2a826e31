"""The ``ai`` battery's Django app (label ``toolkit_ai``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class AIConfig(BatteryConfig):
    """The ai battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.ai"
