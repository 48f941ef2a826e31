"""The ``password`` battery's Django app (label ``toolkit_password``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class PasswordConfig(BatteryConfig):
    """The password battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.password"
