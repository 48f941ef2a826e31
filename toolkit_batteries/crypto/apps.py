"""The ``crypto`` battery's Django app (label ``toolkit_crypto``).

Besides the checks every battery registers, it adds a deployment check
(``manage.py check --deploy``): the public development key must not reach production.
"""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class CryptoConfig(BatteryConfig):
    """The crypto battery: checks from ``checks.battery_checks`` plus a deploy check."""

    name = "toolkit_batteries.crypto"
    #: ``checks.deploy_checks(config)`` runs under ``manage.py check --deploy``.
    has_deploy_checks = True
