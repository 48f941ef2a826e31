"""Deploy check of ``payment``; every ID is in docs/batteries/payment.md, "Checks".

Shape rules are declared on the options. Here: ``E005`` (``check --deploy``), the ``stub``
adapter outside development. Messages name instances, never values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import error, resolved_instances

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["deploy_checks", "development"]


def development() -> bool:
    """Tell whether this is development: ``DEBUG``, or ``TOOLKIT_ENV`` dev/test/development."""
    from toolkit_batteries.serving import is_development

    return is_development()


def deploy_checks(config: Config) -> list[checks.CheckMessage]:
    """Report ``stub`` instances outside development (an error, as the crypto dev key)."""
    if development():
        return []
    return [
        error(
            "toolkit_payment.E005",
            f"payment.{cfg.instance}: the stub adapter is configured outside development; it "
            "holds no funds and verifies no webhook signature",
            f"set PAYMENT__{cfg.instance.upper()}__ADAPTER to payment_a or payment_b "
            "(stripe, paddle), or TOOLKIT_ENV=dev for development",
        )
        for cfg, adapter in resolved_instances(config, "payment")
        if adapter == "stub"
    ]
