"""The ``session`` battery's Django app (label ``toolkit_session``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class SessionConfig(BatteryConfig):
    """The session battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.session"
