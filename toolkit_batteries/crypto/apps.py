"""The ``crypto`` battery's Django app (label ``toolkit_crypto``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class CryptoConfig(BatteryConfig):
    """The crypto battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.crypto"
