"""The payment adapters, by canonical name (default first, as in the catalog).

Each provider module and class is named after its product (``stripe.StripePayment``,
``paddle.PaddlePayment``); the canonical names stay the spec's neutral words.
Values are dotted paths, imported only when an adapter opens, so neither the ``stripe``
SDK nor ``paddle_billing`` costs anything to a project on the ``stub``. The vendor
aliases ``stripe`` -> ``payment_a`` and ``paddle`` -> ``payment_b`` live in the shared
``VENDOR_ALIASES`` table of :mod:`toolkit_batteries.core.loading`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, str] = {
    "stub": "toolkit_batteries.payment.adapters.stub.StubPayment",
    "payment_a": "toolkit_batteries.payment.adapters.stripe.StripePayment",
    "payment_b": "toolkit_batteries.payment.adapters.paddle.PaddlePayment",
}
