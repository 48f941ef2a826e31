"""The ``crypto`` battery's Django app (label ``toolkit_crypto``).

Besides the checks every battery registers, it adds a deployment check
(``manage.py check --deploy``): the public development key must not reach production.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from django.core import checks

from toolkit_batteries.core.apps import BatteryConfig


class CryptoConfig(BatteryConfig):
    """The crypto battery: checks from ``checks.battery_checks`` plus a deploy check."""

    name = "toolkit_batteries.crypto"

    def ready(self) -> None:
        """Register the battery's checks and the development-key deploy check."""
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

    own = {k: v for k, v in toolkit_settings().items() if normalize(str(k)) == "crypto"}
    try:
        config = Config.load(own, os.environ)
    except ConfigurationError:
        return []  # toolkit_batteries.E001 reports it
    return deploy_checks(config)
