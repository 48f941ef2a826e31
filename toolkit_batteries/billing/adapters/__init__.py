"""The billing adapters, by canonical name (default first, as in the catalog).

Each provider module and class is named after its product (``stripe.StripeBilling``,
``paddle.PaddleBilling``); the canonical names stay the spec's neutral words.
Values are dotted paths imported only when an adapter opens, so the provider SDKs cost
nothing to a project on ``stub``. The vendor aliases ``stripe`` -> ``billing_a`` and
``paddle`` -> ``billing_b`` live in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "stub": "toolkit_batteries.billing.adapters.stub.StubBilling",
    "billing_a": "toolkit_batteries.billing.adapters.stripe.StripeBilling",
    "billing_b": "toolkit_batteries.billing.adapters.paddle.PaddleBilling",
}
