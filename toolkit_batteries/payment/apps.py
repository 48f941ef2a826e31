"""The ``payment`` battery's Django app (label ``toolkit_payment``).

Besides the checks every battery registers, it adds a deployment check
(``manage.py check --deploy``, run by ``toolkit serve`` outside development): the
``stub`` adapter, which holds no funds and verifies no webhook, must not reach production.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from django.core import checks

from toolkit_batteries.core.apps import BatteryConfig


class PaymentConfig(BatteryConfig):
    """The payment battery; checks come from ``checks.battery_checks`` plus a deploy check."""

    name = "toolkit_batteries.payment"

    def ready(self) -> None:
        """Register the battery's checks and the stub-outside-development deploy check."""
        super().ready()
        checks.register(_deploy_check, "toolkit", deploy=True)


def _deploy_check(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    from toolkit_batteries.core.checks import toolkit_settings
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.errors import ConfigurationError
    from toolkit_batteries.core.options import normalize

    from .checks import deploy_checks

    own = {k: v for k, v in toolkit_settings().items() if normalize(str(k)) == "payment"}
    try:
        config = Config.load(own, os.environ)
    except ConfigurationError:
        return []  # toolkit_batteries.E001 reports it
    return deploy_checks(config)
