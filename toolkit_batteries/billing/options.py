"""Options of the ``billing`` service (customers, subscriptions, invoices)."""

from __future__ import annotations

from toolkit_batteries.core.options import option, options_class

__all__ = ["BillingOptions"]


@options_class
class BillingOptions:
    """Options of ``billing``; adapters ``stub`` (default), ``billing_a``, ``billing_b``."""

    secret_key: str = option("", secret=True, doc="provider secret key (billing_a)")
    api_key: str = option("", secret=True, doc="provider API key (billing_b)")
    endpoint: str = option("", doc="custom provider URL")
    sandbox: bool = option(False, doc="select the provider sandbox")
