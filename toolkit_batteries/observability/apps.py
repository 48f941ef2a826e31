"""The ``observability`` battery's Django app (label ``toolkit_observability``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class ObservabilityConfig(BatteryConfig):
    """The observability battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.observability"
