"""The ``vectorstore`` battery's Django app (label ``toolkit_vectorstore``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class VectorStoreConfig(BatteryConfig):
    """The vectorstore battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.vectorstore"
