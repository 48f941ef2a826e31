"""What an adapter tells the payment service: a provider's payment, refund and webhook event.

Adapters build these from their provider's answers (:mod:`.adapters`) and
:class:`~.base.Payment` turns them into rows; they are plain frozen values, apart from the
service so an adapter module and the webhook half (:mod:`.webhooks`) can import them
without the service class. :func:`_digest` is how keys, fingerprints and event ids are
kept: by their SHA-256, never as given.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from .states import PaymentState

__all__ = ["NewPayment", "ProviderPayment", "ProviderRefund", "WebhookEvent"]


@dataclass(frozen=True)
class NewPayment:
    """A payment to create at the provider, already checked by the service.

    One value instead of seven parameters, so the service and every adapter's
    ``_create`` agree on it in one place.
    """

    amount: int
    currency: str
    #: The battery's own id, sent to the provider as metadata to find the row again.
    payment_id: str
    description: str
    metadata: dict[str, str]
    capture: bool
    #: Empty: no idempotency key goes to the provider.
    idempotency_key: str = field(default="", repr=False)


@dataclass(frozen=True)
class ProviderPayment:
    """What an adapter learned of a payment from its provider."""

    provider_id: str
    state: PaymentState
    provider_status: str = ""
    #: ``payment_a``: the PaymentIntent's client secret, for the browser; never stored.
    client_secret: str = field(default="", repr=False)
    #: ``payment_b``: the hosted checkout URL; never stored.
    checkout_url: str = ""
    #: Non-secret details the adapter needs later (stored on the row).
    provider_data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderRefund:
    """What an adapter learned of a refund from its provider."""

    provider_id: str
    #: ``pending``, ``succeeded`` or ``failed``.
    status: str


@dataclass(frozen=True)
class WebhookEvent:
    """A verified webhook, as the battery understood it.

    ``state`` is the payment state the event reports (``None`` when it reports none);
    ``amount_refunded`` the provider's running refunded total when the event carries it;
    ``refund_id``/``refund_status``/``refund_amount`` a refund and its new status
    (``provider_id`` then names the refunded payment when the event says). After
    :meth:`Payment.handle_webhook`, ``payment`` is the row it concerned (``None`` when
    unknown), ``applied`` tells whether the row changed, ``note`` why not.
    """

    id: str
    type: str
    provider_id: str = ""
    state: PaymentState | None = None
    amount_refunded: int | None = None
    refund_id: str = ""
    refund_status: str = ""
    #: A refund event's amount in minor units, when the event carries it.
    refund_amount: int | None = None
    data: dict[str, Any] = field(default_factory=dict, repr=False)
    payment: Any = field(default=None, repr=False)
    applied: bool = False
    note: str = ""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
