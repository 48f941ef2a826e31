"""The ``idempotency`` battery's Django app (label ``toolkit_idempotency``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class IdempotencyConfig(BatteryConfig):
    """The idempotency battery; checks come from ``checks.battery_checks`` when present."""

    name = "toolkit_batteries.idempotency"
