"""The ``ratelimit`` battery's Django app (label ``toolkit_ratelimit``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class RateLimitConfig(BatteryConfig):
    """The ratelimit battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.ratelimit"
