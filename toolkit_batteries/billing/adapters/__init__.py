"""The billing adapters, by canonical name (default first, as in the catalog).

Values are dotted paths imported only when an adapter opens, so the provider SDKs cost
nothing to a project on ``stub``. The vendor aliases ``stripe`` -> ``billing_a`` and
``paddle`` -> ``billing_b`` live in the shared ``VENDOR_ALIASES`` table of
:mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS", "ALIASES"]

ADAPTERS: dict[str, str] = {
    "stub": "toolkit_batteries.billing.adapters.stub.StubBilling",
    "billing_a": "toolkit_batteries.billing.adapters.billing_a.BillingA",
    "billing_b": "toolkit_batteries.billing.adapters.billing_b.BillingB",
}

#: Battery-specific aliases (alias -> canonical); the shared vendor table covers the rest.
ALIASES: dict[str, str] = {}
