"""Options of the ``payment`` service (payment intents and webhooks)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.option_kinds import (
    non_negative,
    required,
    secret_set,
    url,
    warn_when_set,
)
from toolkit_batteries.core.options import ByteSize, Duration, option, options_class

__all__ = ["PaymentOptions"]


_PROVIDERS = ("payment_a", "payment_b")
_NEGATIVE = '{where}: option "max_webhook_bytes" or "webhook_tolerance" is negative'


@options_class
class PaymentOptions:
    """Options of ``payment``; adapters ``stub`` (default), ``payment_a``, ``payment_b``.

    ``stub`` verifies no webhooks and holds no funds.
    """

    __checks__ = (
        required(
            "toolkit_payment.E002", adapters=("payment_a",), hint="set PAYMENT__{INSTANCE}__{FIELD}"
        ).on("secret_key"),
        required(
            "toolkit_payment.E002", adapters=("payment_b",), hint="set PAYMENT__{INSTANCE}__{FIELD}"
        ).on("api_key"),
        url(
            "toolkit_payment.E003",
            adapters=_PROVIDERS,
            hint="an https:// URL without credentials; allow_insecure permits http, allow_private "
            "private addresses",
        ).on("endpoint"),
        non_negative("toolkit_payment.E004", hint=None, each=False, message=_NEGATIVE).on(
            "max_webhook_bytes", "webhook_tolerance"
        ),
        secret_set(
            "toolkit_payment.W001",
            "is empty: every webhook will be refused",
            warning=True,
            adapters=_PROVIDERS,
            hint="copy the endpoint's signing secret from the provider's dashboard",
        ).on("webhook_secret"),
        warn_when_set(
            "toolkit_payment.W002",
            "is set but the {adapter} adapter ignores it",
            adapters=_PROVIDERS,
            hint="auto_approve applies to the stub adapter only",
        ).on("auto_approve"),
    )

    secret_key: str = option("", secret=True, doc="provider secret key (payment_a)")
    api_key: str = option("", secret=True, doc="provider API key (payment_b)")
    endpoint: str = option("", doc="custom provider URL")
    sandbox: bool = option(False, doc="select the provider sandbox")
    webhook_secret: str = option("", secret=True, doc="webhook verification secret")
    auto_approve: bool = option(False, doc="mark new payments succeeded instead of pending")
    max_webhook_bytes: ByteSize = option(ByteSize(1024 * 1024), doc="bound on webhook payload size")
    webhook_tolerance: Duration = option(
        timedelta(minutes=5),
        doc="largest drift between a webhook's signed timestamp and this clock (either way)",
    )
    allow_insecure: bool = option(False, doc="permit an http endpoint")
    allow_private: bool = option(
        False,
        doc="permit private, loopback and link-local endpoints (checked after DNS resolution)",
    )
