"""The ``payment`` battery's Django app (label ``toolkit_payment``).

Besides the checks every battery registers, it adds a deployment check
(``manage.py check --deploy``, run by ``toolkit serve`` outside development): the
``stub`` adapter, which holds no funds and verifies no webhook, must not reach production.
"""

from __future__ import annotations

from toolkit_batteries.core.apps import BatteryConfig


class PaymentConfig(BatteryConfig):
    """The payment battery; checks come from ``checks.battery_checks`` plus a deploy check."""

    name = "toolkit_batteries.payment"
    #: ``checks.deploy_checks(config)`` runs under ``manage.py check --deploy``.
    has_deploy_checks = True
