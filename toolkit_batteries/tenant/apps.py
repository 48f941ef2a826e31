"""The ``tenant`` battery's Django app (label ``toolkit_tenant``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class TenantConfig(BatteryConfig):
    """The tenant battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.tenant"
