"""Options of the ``billing`` service (customers, subscriptions, invoices).

The first four keys are the spec's table. The rest are declared on purpose beyond it
(``tests/core/test_service_options.py`` lists why): the webhook secret and its limits,
the stub's approval switch, and the shared outbound rules.
"""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import OutboundSwitches
from toolkit_batteries.core.option_kinds import webhook_provider
from toolkit_batteries.core.options import ByteSize, option, options_class

__all__ = ["DEFAULT_MAX_WEBHOOK_BYTES", "DEFAULT_WEBHOOK_TOLERANCE", "BillingOptions"]

#: Largest webhook body read before it is refused (1 MiB).
DEFAULT_MAX_WEBHOOK_BYTES = ByteSize(1 << 20)
#: How far a webhook's signed timestamp may be from now (five minutes).
DEFAULT_WEBHOOK_TOLERANCE = timedelta(minutes=5)

_NEGATIVE = '{where}: options "max_webhook_bytes" and "webhook_tolerance" must not be negative'


@options_class
class BillingOptions(OutboundSwitches):
    """Options of ``billing``; adapters ``stub`` (default), ``billing_a``, ``billing_b``."""

    __checks__ = webhook_provider(
        "billing",
        ("billing_a", "billing_b"),
        url_hint="endpoint is an https:// URL without credentials; allow_insecure permits http, "
        "allow_private private addresses",
        negative=_NEGATIVE,
        unsigned="is empty: every {adapter} webhook will be refused",
        unsigned_hint="set it to the endpoint's signing secret from the provider's dashboard",
    )

    secret_key: str = option("", secret=True, doc="provider secret key (billing_a)")
    api_key: str = option("", secret=True, doc="provider API key (billing_b)")
    endpoint: str = option("", doc="custom provider URL")
    sandbox: bool = option(False, doc="select the provider sandbox")
    webhook_secret: str = option(
        "", secret=True, doc="the provider's webhook signing secret (billing_a, billing_b)"
    )
    webhook_tolerance: timedelta = option(
        DEFAULT_WEBHOOK_TOLERANCE, doc="how far a webhook's signed timestamp may be from now"
    )
    max_webhook_bytes: ByteSize = option(
        DEFAULT_MAX_WEBHOOK_BYTES, doc="webhook bodies larger than this are refused"
    )
    auto_approve: bool = option(
        False, doc="stub: new subscriptions start active (trialing with a trial) not incomplete"
    )
