"""The ``db`` battery's Django app (label ``toolkit_db``).

``BatteryConfig.ready()`` registers ``toolkit_db.E001`` (the adapter resolves) and the
battery's own checks from :func:`toolkit_batteries.db.checks.battery_checks`.
"""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class DBConfig(BatteryConfig):
    """The db battery: a SQL pool other services borrow."""

    name = "toolkit_batteries.db"
    label = "toolkit_db"
    service = "db"
    verbose_name = "toolkit: db"
