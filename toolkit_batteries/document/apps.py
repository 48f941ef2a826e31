"""The ``document`` battery's Django app (label ``toolkit_document``)."""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class DocumentConfig(BatteryConfig):
    """The document battery; checks come from ``checks.battery_checks``."""

    name = "toolkit_batteries.document"
