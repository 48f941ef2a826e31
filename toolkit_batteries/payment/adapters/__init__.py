"""The payment adapters. Each provider module and class is named after its product
(``stripe.StripePayment``, ``paddle.PaddlePayment``; aliases ``stripe`` and ``paddle``
from the catalog row); neither the ``stripe`` SDK nor ``paddle_billing`` costs anything to
a project on ``stub``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "stub.StubPayment payment_a=stripe.StripePayment payment_b=paddle.PaddlePayment"
)
