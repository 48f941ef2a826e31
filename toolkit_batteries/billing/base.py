"""The ``billing`` interface: customers, subscriptions, invoices and provider webhooks.

:class:`Billing` writes every rule once and leaves adapters the provider calls
(``_create_customer``, ``_create_subscription``, ``_get_subscription``,
``_cancel_subscription``, ``_list_invoices``, ``_checkout_url``, ``_portal_url``) and the
webhook signature check (``_verify_webhook``, ``_event``). The rules:

* **Idempotent mutations.** ``create_customer``, ``create_subscription`` and
  ``cancel_subscription`` take ``idempotency_key``: the call is reserved in the
  idempotency battery (``billing:<instance>:<op>:<key>``) with a fingerprint of its
  arguments, the provider is called once and its answer stored, and a retry with the
  same key gets the stored answer without a second provider call. The same key with
  other arguments raises :class:`IdempotencyMismatchError`; a key whose first call is
  still running raises :class:`IdempotencyConflictError`. Adapters also pass the key to
  providers that take one (``billing_a`` sends ``Idempotency-Key``).
* **One state machine.** Every subscription the battery sees is recorded in
  :class:`~toolkit_batteries.billing.models.BillingSubscription` and every status change
  goes through :mod:`.states`; an illegal one raises
  :class:`~toolkit_batteries.billing.states.IllegalTransitionError` and changes nothing.
* **Webhooks.** :meth:`Billing.handle_webhook` refuses a body over ``max_webhook_bytes``
  before parsing it, checks the signature in constant time (the provider SDK's check)
  and the signed timestamp against ``webhook_tolerance`` on :attr:`Billing.clock`,
  applies each event once (the event id is reserved in the idempotency battery) and
  ignores an event older than the last one applied to that subscription.

Errors name the service, instance and operation, never a key, a secret or a body.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import timedelta
from typing import Any, ClassVar

from toolkit_batteries.core.adapter import Service
from toolkit_batteries.core.errors import InvalidOptionsError

from .errors import (
    BillingError,
    IdempotencyConflictError,
    IdempotencyMismatchError,
    ProviderError,
    SubscriptionNotFoundError,
    WebhookSignatureError,
    WebhookTooLargeError,
)
from .options import DEFAULT_MAX_WEBHOOK_BYTES, DEFAULT_WEBHOOK_TOLERANCE
from .states import (
    IllegalTransitionError,
    SubscriptionStatus,
    check_transition,
    parse_status,
)

__all__ = [
    "Applied",
    "Billing",
    "BillingError",
    "Customer",
    "IdempotencyConflictError",
    "IdempotencyMismatchError",
    "Invoice",
    "ProviderError",
    "Subscription",
    "SubscriptionNotFoundError",
    "WebhookEvent",
    "WebhookSignatureError",
    "WebhookTooLargeError",
]

logger = logging.getLogger("toolkit.billing")

#: How long a completed mutation's answer is replayed for the same idempotency key.
IDEMPOTENCY_TTL = 24 * 3600.0
#: How long a webhook event id is remembered (providers retry for about three days).
EVENT_TTL = 4 * 24 * 3600.0


# ------------------------------------------------------------------ errors


# ------------------------------------------------------------------ values


@dataclass(frozen=True)
class Customer:
    """A billing customer at the provider."""

    id: str
    email: str = ""
    name: str = ""


@dataclass(frozen=True)
class Subscription:
    """A subscription as the provider (or the stub) reports it.

    ``reference`` links a subscription to what created it before it had an id of its own
    (``billing_b``: the checkout transaction); ``checkout_url`` is where the customer
    pays, when the provider needs that first.
    """

    id: str
    customer_id: str
    status: SubscriptionStatus
    price_id: str = ""
    current_period_end: float | None = None
    cancel_at_period_end: bool = False
    reference: str = ""
    checkout_url: str = ""

    def to_json(self) -> dict[str, Any]:
        """Return a JSON-able dict (what the idempotency battery stores)."""
        data = asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Subscription:
        """Rebuild from :meth:`to_json`."""
        return cls(**{**data, "status": SubscriptionStatus(data["status"])})


@dataclass(frozen=True)
class Invoice:
    """One invoice (``billing_b``: one billed transaction); amounts in minor units."""

    id: str
    customer_id: str
    status: str
    amount_due: int = 0
    currency: str = ""
    subscription_id: str = ""
    hosted_url: str = ""


@dataclass(frozen=True)
class WebhookEvent:
    """A verified provider event; ``subscription`` is set for subscription events."""

    id: str
    type: str
    created: float
    subscription: Subscription | None = None
    data: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Applied:
    """What :meth:`Billing.apply_event` did: ``applied``, ``duplicate``, ``stale``,
    ``ignored`` (not a subscription event) or ``illegal`` (refused by the state machine)."""

    outcome: str
    event_id: str
    subscription_id: str = ""
    status: str = ""


# ------------------------------------------------------------------ the base


class Billing(Service):
    """Subscriptions and invoices (spec: ``billing``); adapters implement the ``_`` calls."""

    service_name: ClassVar[str] = "billing"
    #: Whether the adapter talks to a provider that moves money (the stub does not).
    holds_funds: ClassVar[bool] = True

    def __init__(
        self,
        options: Any,
        *,
        instance: str = "default",
        database: Any = None,
        idempotency: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Keep the options, the record's database and the idempotency store."""
        self.options = options
        self.instance = instance
        self.database = database
        self.idempotency = idempotency
        self.clock = clock
        limit = int(getattr(options, "max_webhook_bytes", 0) or DEFAULT_MAX_WEBHOOK_BYTES)
        if limit <= 0:
            raise InvalidOptionsError(
                "billing", "max_webhook_bytes", "must be positive", instance=instance
            )
        #: Largest webhook body accepted, in bytes.
        self.max_webhook_bytes = limit
        tolerance = getattr(options, "webhook_tolerance", None) or DEFAULT_WEBHOOK_TOLERANCE
        seconds = tolerance.total_seconds() if isinstance(tolerance, timedelta) else tolerance
        if float(seconds) <= 0:
            raise InvalidOptionsError(
                "billing", "webhook_tolerance", "must be positive", instance=instance
            )
        #: Seconds a signed webhook timestamp may be from :attr:`clock`.
        self.webhook_tolerance = float(seconds)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} billing.{self.instance}>"

    @staticmethod
    def open_parts(ctx: Any) -> dict[str, Any]:
        """Reach the record's database (tables checked, none created) and the idempotency
        store: the ``db`` and ``idempotency`` services of the same container."""
        from toolkit_batteries.db import require_tables

        from .models import BillingSubscription

        database = ctx.container.db()
        require_tables(database, BillingSubscription, service="billing", instance=ctx.instance)
        return {
            "instance": ctx.instance,
            "database": database,
            "idempotency": ctx.container.idempotency(),
        }

    # ------------------------------------------------------------------ customers

    def create_customer(
        self, email: str, *, name: str = "", idempotency_key: str | None = None
    ) -> Customer:
        """Create a customer at the provider."""
        _require("email", email, self.instance)
        answer, _ = self._once(
            "create_customer",
            idempotency_key,
            {"email": email, "name": name},
            lambda key: asdict(self._create_customer(email, name, key)),
        )
        return Customer(**answer)

    # ------------------------------------------------------------------ subscriptions

    def create_subscription(
        self,
        customer_id: str,
        price_id: str,
        *,
        trial_days: int = 0,
        idempotency_key: str | None = None,
    ) -> Subscription:
        """Subscribe ``customer_id`` to ``price_id`` and record the subscription."""
        _require("customer_id", customer_id, self.instance)
        _require("price_id", price_id, self.instance)
        if trial_days < 0:
            raise ValueError(f"billing.{self.instance}: trial_days must not be negative")
        answer, fresh = self._once(
            "create_subscription",
            idempotency_key,
            {"customer": customer_id, "price": price_id, "trial": trial_days},
            lambda key: self._create_subscription(customer_id, price_id, trial_days, key).to_json(),
        )
        subscription = Subscription.from_json(answer)
        if fresh:  # a replayed answer was recorded when it was fresh
            self.record(subscription)
        return subscription

    def get_subscription(self, subscription_id: str) -> Subscription:
        """Return the subscription as the provider reports it now (nothing is recorded)."""
        _require("subscription_id", subscription_id, self.instance)
        return self._get_subscription(subscription_id)

    def sync_subscription(self, subscription_id: str) -> Subscription:
        """Fetch the subscription and record it through the state machine."""
        subscription = self.get_subscription(subscription_id)
        self.record(subscription)
        return subscription

    def cancel_subscription(
        self,
        subscription_id: str,
        *,
        at_period_end: bool = False,
        idempotency_key: str | None = None,
    ) -> Subscription:
        """Cancel now, or at the end of the paid period (status stays, flag set).

        The recorded status is checked first: cancelling a subscription the state machine
        says cannot be canceled (``incomplete_expired``) raises
        :class:`IllegalTransitionError` without calling the provider.
        """
        _require("subscription_id", subscription_id, self.instance)
        row = self._row(subscription_id)
        if row is not None and not at_period_end:
            check_transition(
                parse_status(row.status), SubscriptionStatus.CANCELED, instance=self.instance
            )
        answer, fresh = self._once(
            "cancel_subscription",
            idempotency_key,
            {"subscription": subscription_id, "at_period_end": at_period_end},
            lambda key: self._cancel_subscription(subscription_id, at_period_end, key).to_json(),
        )
        subscription = Subscription.from_json(answer)
        if fresh:  # a replayed answer was recorded when it was fresh
            self.record(subscription)
        return subscription

    # ------------------------------------------------------------------ invoices, sessions

    def list_invoices(self, customer_id: str, *, limit: int = 10) -> list[Invoice]:
        """Return the customer's most recent invoices (at most ``limit``, 1 to 100)."""
        _require("customer_id", customer_id, self.instance)
        if not 1 <= limit <= 100:
            raise ValueError(f"billing.{self.instance}: limit must be between 1 and 100")
        return self._list_invoices(customer_id, limit)

    def checkout_url(
        self, customer_id: str, price_id: str, *, success_url: str, cancel_url: str = ""
    ) -> str:
        """Return the URL of a hosted checkout that subscribes the customer to the price."""
        _require("customer_id", customer_id, self.instance)
        _require("price_id", price_id, self.instance)
        return self._checkout_url(customer_id, price_id, success_url, cancel_url)

    def portal_url(self, customer_id: str, *, return_url: str = "") -> str:
        """Return the URL of the provider's self-service portal for the customer."""
        _require("customer_id", customer_id, self.instance)
        return self._portal_url(customer_id, return_url)

    # ------------------------------------------------------------------ webhooks

    def parse_webhook(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        """Check size, signature and timestamp, then return the event.

        Raises :class:`WebhookTooLargeError` before looking at a body over
        ``max_webhook_bytes`` and :class:`WebhookSignatureError` for a missing or wrong
        signature or a timestamp further than ``webhook_tolerance`` from the clock.
        """
        if len(body) > self.max_webhook_bytes:
            raise WebhookTooLargeError(self.instance, self.max_webhook_bytes)
        stamp, payload = self._verify_webhook(bytes(body), _Headers(headers))
        if abs(self.clock() - stamp) > self.webhook_tolerance:
            raise WebhookSignatureError(self.instance, "timestamp outside the tolerance")
        if not isinstance(payload, Mapping):
            raise WebhookSignatureError(self.instance, "body is not a JSON object")
        return self._event(payload)

    def handle_webhook(self, body: bytes, headers: Mapping[str, str]) -> Applied:
        """:meth:`parse_webhook`, then :meth:`apply_event`."""
        return self.apply_event(self.parse_webhook(body, headers))

    def apply_event(self, event: WebhookEvent) -> Applied:
        """Apply a verified event once; a replayed event id is reported ``duplicate``."""
        if event.subscription is None:
            return Applied("ignored", event.id)
        reservation = None
        if self.idempotency is not None and event.id:
            key = _store_key(self.instance, "event", event.id)
            reservation = self.idempotency.reserve(key, EVENT_TTL)
            if not reservation.owned:
                return Applied("duplicate", event.id, event.subscription.id)
        try:
            outcome = self.record(event.subscription, event_at=event.created)
        except IllegalTransitionError as exc:
            logger.warning(
                "billing.%s: event %s refused by the state machine (%s -> %s)",
                self.instance,
                event.type,
                exc.current,
                exc.target,
            )
            outcome = "illegal"
        except BaseException:
            if reservation is not None:
                reservation.release()
            raise
        if reservation is not None:
            reservation.commit({"outcome": outcome})
        return Applied(outcome, event.id, event.subscription.id, event.subscription.status.value)

    # ------------------------------------------------------------------ the record

    def record(self, subscription: Subscription, *, event_at: float | None = None) -> str:
        """Write ``subscription`` to the table through the state machine.

        Returns ``applied``, or ``stale`` when ``event_at`` is older than the last event
        applied to the row. A row first recorded under its ``reference`` (a checkout) is
        re-keyed to the subscription's own id. Raises :class:`IllegalTransitionError`
        and writes nothing when the status change is not allowed.
        """
        from django.db import transaction

        from .models import BillingSubscription

        now = self.clock()
        alias = self.database.alias
        rows = BillingSubscription.objects.using(alias)
        with transaction.atomic(using=alias):
            row = (
                rows.select_for_update()
                .filter(instance=self.instance, provider_id=subscription.id)
                .first()
            )
            if row is None and subscription.reference:
                row = (
                    rows.select_for_update()
                    .filter(instance=self.instance, provider_id=subscription.reference)
                    .first()
                )
            if row is None:
                rows.create(
                    instance=self.instance,
                    adapter=self.adapter_name,
                    provider_id=subscription.id,
                    reference=subscription.reference,
                    customer_id=subscription.customer_id,
                    price_id=subscription.price_id,
                    status=subscription.status.value,
                    current_period_end=subscription.current_period_end,
                    cancel_at_period_end=subscription.cancel_at_period_end,
                    last_event_at=event_at or 0.0,
                    created_at=now,
                    updated_at=now,
                )
                return "applied"
            if event_at is not None and row.last_event_at and event_at < row.last_event_at:
                return "stale"
            check_transition(parse_status(row.status), subscription.status, instance=self.instance)
            row.provider_id = subscription.id
            row.reference = subscription.reference or row.reference
            row.customer_id = subscription.customer_id or row.customer_id
            row.price_id = subscription.price_id or row.price_id
            row.status = subscription.status.value
            if subscription.current_period_end is not None:
                row.current_period_end = subscription.current_period_end
            row.cancel_at_period_end = subscription.cancel_at_period_end
            if event_at is not None:
                row.last_event_at = max(row.last_event_at or 0.0, event_at)
            row.updated_at = now
            row.save(using=alias)
        return "applied"

    def recorded(self, subscription_id: str) -> Subscription | None:
        """Return the recorded subscription (as last applied), or ``None``."""
        row = self._row(subscription_id)
        if row is None:
            return None
        return Subscription(
            id=row.provider_id,
            customer_id=row.customer_id,
            status=parse_status(row.status),
            price_id=row.price_id,
            current_period_end=row.current_period_end,
            cancel_at_period_end=row.cancel_at_period_end,
            reference=row.reference,
        )

    def _row(self, subscription_id: str) -> Any:
        from .models import BillingSubscription

        return (
            BillingSubscription.objects.using(self.database.alias)
            .filter(instance=self.instance, provider_id=subscription_id)
            .first()
        )

    # ------------------------------------------------------------------ idempotency

    def _once(
        self,
        operation: str,
        key: str | None,
        arguments: Mapping[str, Any],
        call: Callable[[str | None], dict[str, Any]],
    ) -> tuple[dict[str, Any], bool]:
        """Run ``call(key)`` once per idempotency ``key`` (every time without one).

        Returns the answer and whether it is fresh (``False``: replayed from the store).
        """
        if key is None:
            return call(None), True
        _require("idempotency_key", key, self.instance)
        if len(key) > 200:
            raise ValueError(f"billing.{self.instance}: idempotency_key is over 200 characters")
        encoded = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
        fingerprint = hashlib.sha256(encoded.encode()).hexdigest()
        reservation = self.idempotency.reserve(
            _store_key(self.instance, operation, key), IDEMPOTENCY_TTL, fingerprint=fingerprint
        )
        if reservation.fingerprint and reservation.fingerprint != fingerprint:
            raise IdempotencyMismatchError(self.instance, operation)
        if not reservation.owned:
            if reservation.response is None:
                raise IdempotencyConflictError(self.instance, operation)
            return dict(reservation.response), False
        try:
            answer = call(key)
        except BaseException:
            reservation.release()
            raise
        reservation.commit(answer)
        return answer, True

    # ------------------------------------------------------------------ adapter primitives

    def _create_customer(self, email: str, name: str, key: str | None) -> Customer:
        raise NotImplementedError

    def _create_subscription(
        self, customer_id: str, price_id: str, trial_days: int, key: str | None
    ) -> Subscription:
        raise NotImplementedError

    def _get_subscription(self, subscription_id: str) -> Subscription:
        raise NotImplementedError

    def _cancel_subscription(
        self, subscription_id: str, at_period_end: bool, key: str | None
    ) -> Subscription:
        raise NotImplementedError

    def _list_invoices(self, customer_id: str, limit: int) -> list[Invoice]:
        raise NotImplementedError

    def _checkout_url(
        self, customer_id: str, price_id: str, success_url: str, cancel_url: str
    ) -> str:
        raise NotImplementedError

    def _portal_url(self, customer_id: str, return_url: str) -> str:
        raise NotImplementedError

    def _verify_webhook(self, body: bytes, headers: Mapping[str, str]) -> tuple[float, Any]:
        """Return ``(signed timestamp, decoded JSON body)`` or raise WebhookSignatureError."""
        raise NotImplementedError

    def _event(self, payload: Mapping[str, Any]) -> WebhookEvent:
        raise NotImplementedError


class _Headers(dict):
    """Case-insensitive read-only view of request headers (lower-cased keys)."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        super().__init__((str(k).lower(), str(v)) for k, v in dict(headers).items())

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(key.lower(), default)


def _store_key(instance: str, operation: str, key: str) -> str:
    return f"billing:{instance}:{operation}:{key}"


def _require(field_name: str, value: Any, instance: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"billing.{instance}: {field_name} must be a non-empty string")


def with_status(subscription: Subscription, status: SubscriptionStatus) -> Subscription:
    """Return ``subscription`` with another status (adapters and tests use it)."""
    return replace(subscription, status=status)


def warn_lifted(ctx: Any) -> None:
    """Log a warning at open when an outbound rule is lifted (``allow_insecure``,
    ``allow_private``)."""
    lifted = [
        what
        for what, on in (
            ("plain http", ctx.options.allow_insecure),
            ("private addresses", ctx.options.allow_private),
        )
        if on
    ]
    if lifted:
        ctx.logger.warning(
            "billing.%s: %s allows %s", ctx.instance, ctx.adapter, " and ".join(lifted)
        )
