"""Options of the ``payment`` service (payment intents and webhooks)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import warn_when_set, webhook_provider
from toolkit_batteries.core.options import ByteSize, Duration, option, options_class

__all__ = ["PaymentOptions"]


_PROVIDERS = ("payment_a", "payment_b")


@options_class
class PaymentOptions(OutboundSwitches):
    """Options of ``payment``; adapters ``stub`` (default), ``payment_a``, ``payment_b``.

    ``stub`` verifies no webhooks and holds no funds.
    """

    __checks__ = (
        *webhook_provider(
            "payment",
            _PROVIDERS,
            url_hint="an https:// URL without credentials; allow_insecure permits http, "
            "allow_private private addresses",
            negative='{where}: option "max_webhook_bytes" or "webhook_tolerance" is negative',
            unsigned="is empty: every webhook will be refused",
            unsigned_hint="copy the endpoint's signing secret from the provider's dashboard",
        ),
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
