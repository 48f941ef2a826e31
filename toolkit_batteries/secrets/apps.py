"""The ``secrets`` battery's Django app (label ``toolkit_secrets``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class SecretsConfig(BatteryConfig):
    """The secrets battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.secrets"
