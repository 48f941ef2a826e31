"""The ``auth`` battery's Django app (label ``toolkit_auth``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class AuthConfig(BatteryConfig):
    """The auth battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.auth"
