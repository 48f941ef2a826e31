"""System checks of the ``payment`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_payment.E002``: ``payment_a`` without ``secret_key``, or ``payment_b``
  without ``api_key``.
* ``toolkit_payment.E003``: ``endpoint`` is not usable (not https without
  ``allow_insecure``, credentials/query inside, a literal private address without
  ``allow_private``).
* ``toolkit_payment.E004``: ``max_webhook_bytes`` or ``webhook_tolerance`` is negative.
* ``toolkit_payment.W001``: a provider adapter without ``webhook_secret`` (every webhook
  will be refused).
* ``toolkit_payment.W002``: ``auto_approve`` on a provider adapter, which ignores it.
* ``toolkit_payment.E005`` (``check --deploy`` only, run by ``toolkit serve`` outside
  development): an instance uses the ``stub`` adapter outside development
  (:func:`development`: ``DEBUG``, or ``TOOLKIT_ENV`` ``dev``/``test``/``development``).
  The stub holds no funds and verifies no webhook signature; its webhook view refuses
  every delivery outside development.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["deploy_checks", "development"]

_OBJ = "settings.TOOLKIT"


def development() -> bool:
    """Tell whether this is development: ``DEBUG``, or ``TOOLKIT_ENV`` dev/test/development."""
    from toolkit_batteries.serving import is_development

    return is_development()


def deploy_checks(config: Config) -> list[checks.CheckMessage]:
    """Report ``stub`` instances outside development (an error, as the crypto dev key)."""
    if development():
        return []
    return [
        checks.Error(
            f"payment.{cfg.instance}: the stub adapter is configured outside development; it "
            "holds no funds and verifies no webhook signature",
            hint=f"set PAYMENT__{cfg.instance.upper()}__ADAPTER to payment_a or payment_b "
            "(stripe, paddle), or TOOLKIT_ENV=dev for development",
            obj=_OBJ,
            id="toolkit_payment.E005",
        )
        for cfg, adapter in resolved_instances(config, "payment")
        if adapter == "stub"
    ]
