"""The billing adapters. Each provider module and class is named after its product
(``stripe.StripeBilling``, ``paddle.PaddleBilling``; aliases ``stripe`` and ``paddle``
from the catalog row); their SDKs cost nothing to a project on ``stub``.
"""

from __future__ import annotations

from toolkit_batteries.core.loading import adapter_paths

__all__ = ["ADAPTERS"]

ADAPTERS = adapter_paths(
    __name__, "stub.StubBilling billing_a=stripe.StripeBilling billing_b=paddle.PaddleBilling"
)
