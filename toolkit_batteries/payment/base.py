"""The payment service: create, capture, cancel and refund payments; receive webhooks.

::

    payment = services.payment()
    record = payment.create(1999, "eur", reference="order-17")        # a PaymentRecord row
    record.client_secret                     # payment_a: give it to the browser (not stored)
    payment.capture(record.id)               # after create(..., capture=False)
    payment.refund(record.id, 500, idempotency_key="refund-order-17-1")
    event = payment.handle_webhook(request.body, request.headers)     # verify, then apply

Every adapter records payments and refunds as rows of :mod:`.models` in the ``db``
service's database, and moves them only along the state machine of :mod:`.states`
(an illegal move raises :class:`~.states.IllegalTransitionError`). Refunds (and creates
given an ``idempotency_key``) run once per key through the ``idempotency`` battery: the
same key returns the same refund without calling the provider again.

Adapters implement the primitives (``_create``, ``_retrieve``, ``_capture``,
``_cancel``, ``_refund``, ``_parse_event`` and, for a signed scheme, set
``signature_scheme``); this class validates arguments, writes rows, enforces the state
machine, bounds and verifies webhooks once for all of them. The webhook half lives in
:mod:`.webhooks` (these methods delegate there); the values adapters return, in
:mod:`.values`.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from toolkit_batteries.core.adapter import Service

from . import webhooks
from .errors import (
    IdempotencyKeyReusedError,
    InvalidPaymentError,
    OperationInProgressError,
    PaymentError,
    PaymentNotFoundError,
    PaymentNotSupportedError,
    PaymentProviderError,
    WebhookPayloadError,
    WebhookTooLargeError,
)
from .signatures import Scheme
from .states import IllegalTransitionError, PaymentState, check_transition
from .values import NewPayment, ProviderPayment, ProviderRefund, WebhookEvent, _digest
from .webhooks import EVENT_TTL as EVENT_TTL

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

    from .models import PaymentRecord, RefundRecord

__all__ = [
    "DEFAULT_MAX_WEBHOOK_BYTES",
    "DEFAULT_WEBHOOK_TOLERANCE",
    "IdempotencyKeyReusedError",
    "InvalidPaymentError",
    "NewPayment",
    "OperationInProgressError",
    "Payment",
    "PaymentError",
    "PaymentNotFoundError",
    "PaymentNotSupportedError",
    "PaymentProviderError",
    "ProviderPayment",
    "ProviderRefund",
    "WebhookEvent",
    "WebhookPayloadError",
    "WebhookTooLargeError",
]

#: The spec's bound on a webhook body (``max_webhook_bytes``).
DEFAULT_MAX_WEBHOOK_BYTES = 1024 * 1024
#: Largest accepted drift of a webhook's signed timestamp, in seconds (``webhook_tolerance``).
DEFAULT_WEBHOOK_TOLERANCE = 300.0
#: Largest amount accepted, in minor units (the providers' own bound is 99,999,999.99).
MAX_AMOUNT = 99_999_999_999
_CURRENCY = re.compile(r"[A-Za-z]{3}")
_REFUNDABLE = (PaymentState.SUCCEEDED, PaymentState.PARTIALLY_REFUNDED)


# ---------------------------------------------------------------------------- the service


class Payment(Service):
    """Base of the payment adapters (see the module docstring)."""

    service_name: ClassVar[str] = "payment"
    #: The webhook signature layout; ``None`` means webhooks are not verified (``stub``).
    signature_scheme: ClassVar[Scheme | None] = None
    #: Whether ``create(..., capture=False)`` and :meth:`capture` exist at the provider.
    manual_capture: ClassVar[bool] = True

    def __init__(
        self,
        *,
        instance: str = "default",
        database: Any,
        idempotency: Any = None,
        webhook_secret: str = "",
        max_webhook_bytes: int = DEFAULT_MAX_WEBHOOK_BYTES,
        webhook_tolerance: float = DEFAULT_WEBHOOK_TOLERANCE,
        auto_approve: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Keep what every adapter shares; ``database`` is a ``db`` service object."""
        self.instance = instance
        self.database = database
        self.idempotency = idempotency
        self._webhook_secret = webhook_secret
        self.max_webhook_bytes = int(max_webhook_bytes) or DEFAULT_MAX_WEBHOOK_BYTES
        self.webhook_tolerance = float(webhook_tolerance) or DEFAULT_WEBHOOK_TOLERANCE
        self.auto_approve = auto_approve
        #: Unix seconds; the webhook timestamp check reads it (tests inject a fake one).
        self.clock = clock

    @classmethod
    def common_kwargs(cls, ctx: OpenContext) -> dict[str, Any]:
        """Return the constructor arguments every adapter takes from ``ctx``.

        Opens the ``db`` service (the tables must exist: ``manage.py migrate``) and the
        default ``idempotency`` instance, which refunds go through unless code injects
        another store with :meth:`use_idempotency`.
        """
        from toolkit_batteries.db import require_tables

        from .models import PaymentRecord, RefundRecord

        options = ctx.options
        database = ctx.container.db()
        require_tables(
            database, PaymentRecord, RefundRecord, service=ctx.service, instance=ctx.instance
        )
        tolerance = options.webhook_tolerance
        return {
            "instance": ctx.instance,
            "database": database,
            "idempotency": ctx.container.idempotency(),
            "webhook_secret": options.webhook_secret,
            "max_webhook_bytes": int(options.max_webhook_bytes or 0),
            "webhook_tolerance": tolerance.total_seconds() if tolerance else 0.0,
            "auto_approve": bool(options.auto_approve),
        }

    def use_idempotency(self, store: Any) -> None:
        """Make refunds (and keyed creates) go through ``store``, an idempotency service.

        The spec's "refund idempotency store injected from code": pass
        ``services.idempotency("shared")`` when several workers serve webhooks and refunds.
        """
        self.idempotency = store

    # ------------------------------------------------------------------ reading

    def _rows(self) -> Any:
        """Return this instance's payment rows: every lookup goes through here.

        Instances share the table (and often an adapter), so a provider id or a primary
        key alone may name another instance's payment: a webhook signed with a test
        instance's secret must never move a live payment.
        """
        from .models import PaymentRecord

        return PaymentRecord.objects.using(self.database.alias).filter(instance=self.instance)

    def _refund_rows(self) -> Any:
        """Return the refund rows of this instance's payments."""
        from .models import RefundRecord

        return RefundRecord.objects.using(self.database.alias).filter(
            payment__instance=self.instance
        )

    def get(self, payment_id: uuid.UUID | str) -> PaymentRecord:
        """Return the payment row ``payment_id`` of this instance, or raise not found."""
        try:
            key = payment_id if isinstance(payment_id, uuid.UUID) else uuid.UUID(str(payment_id))
        except ValueError:
            raise PaymentNotFoundError(self.instance, "(not a payment id)") from None
        found = self._rows().filter(pk=key).first()
        if found is None:
            raise PaymentNotFoundError(self.instance, str(key))
        return found

    def find(self, provider_id: str) -> PaymentRecord | None:
        """Return this instance's payment with provider object id ``provider_id``, or None."""
        if not provider_id:
            return None
        return self._rows().filter(adapter=self.adapter_name, provider_id=provider_id).first()

    def refunds(self, payment_id: uuid.UUID | str) -> list[RefundRecord]:
        """Return the refunds of a payment, oldest first."""
        record = self.get(payment_id)
        return list(self._refund_rows().filter(payment=record).order_by("created_at"))

    # ------------------------------------------------------------------ operations

    def create(
        self,
        amount: int,
        currency: str,
        *,
        reference: str = "",
        description: str = "",
        metadata: Mapping[str, str] | None = None,
        capture: bool = True,
        idempotency_key: str | None = None,
    ) -> PaymentRecord:
        """Create a payment of ``amount`` minor units (cents) of ``currency``.

        The row starts in the state the provider reports (``pending`` usually;
        ``succeeded``, or ``authorized`` with ``capture=False``, on the ``stub`` with
        ``auto_approve``). The returned row carries ``client_secret`` (``payment_a``) or
        ``checkout_url`` (``payment_b``) for the customer's side, never stored. With
        ``idempotency_key``, a retry returns the first call's payment.
        """
        amount = self._check_amount(amount)
        currency = self._check_currency(currency)
        meta = self._check_metadata(metadata)
        if len(reference) > 255 or len(description) > 1000:
            raise InvalidPaymentError(self.instance, "reference", "or description is too long")
        if not capture and not self.manual_capture:
            raise PaymentNotSupportedError(self.instance, self.adapter_name, "capture=False")
        payment_id = uuid.uuid4()
        answered: dict[str, ProviderPayment] = {}
        rows: dict[str, PaymentRecord] = {}

        def at_provider(provider_key: str) -> dict[str, Any]:
            found = self._create(
                NewPayment(
                    amount, currency, str(payment_id), description, meta, capture, provider_key
                )
            )
            answered[found.provider_id] = found
            return {
                "payment_id": str(payment_id),
                "provider_id": found.provider_id,
                "state": found.state.value,
                "provider_status": found.provider_status,
                "provider_data": found.provider_data,
            }

        def in_books(answer: dict[str, Any]) -> str:
            # A replayed keyed create (or a retried local write) finds the row it made.
            existing = self.find(answer["provider_id"])
            if existing is not None:
                rows[str(existing.id)] = existing
                return str(existing.id)
            found = ProviderPayment(
                answer["provider_id"],
                PaymentState(answer["state"]),
                answer["provider_status"],
                provider_data=answer["provider_data"],
            )
            row = self._insert(
                uuid.UUID(answer["payment_id"]),
                amount,
                currency,
                reference,
                description,
                meta,
                found,
            )
            rows[str(row.id)] = row
            return str(row.id)

        if idempotency_key is None:  # no replay possible: insert what the provider said
            found = answered[at_provider("")["provider_id"]]
            row = self._insert(payment_id, amount, currency, reference, description, meta, found)
            row.client_secret, row.checkout_url = found.client_secret, found.checkout_url
            return row
        fingerprint = _digest(f"{amount}:{currency}:{reference}:{capture}")
        done = self._once("create", idempotency_key, fingerprint, at_provider, in_books)
        record = rows.get(done) or self.get(done)
        shown = answered.get(record.provider_id)
        # The client secret and checkout URL are never stored: only the call that reached
        # the provider can hand them out.
        record.client_secret = shown.client_secret if shown else ""
        record.checkout_url = shown.checkout_url if shown else ""
        return record

    def sync(self, payment_id: uuid.UUID | str) -> PaymentRecord:
        """Ask the provider for the payment's status and move the row along the machine."""
        record = self.get(payment_id)
        found = self._retrieve(record)
        return self._apply(record.id, found.state, provider_status=found.provider_status)

    def capture(self, payment_id: uuid.UUID | str, amount: int | None = None) -> PaymentRecord:
        """Capture an ``authorized`` payment (all of it, or ``amount``): ``succeeded``."""
        if not self.manual_capture:
            raise PaymentNotSupportedError(self.instance, self.adapter_name, "capture")
        record = self.get(payment_id)
        if record.state != PaymentState.AUTHORIZED:
            raise IllegalTransitionError(
                self.instance,
                str(record.id),
                record.payment_state,
                PaymentState.SUCCEEDED,
                action="capture",
            )
        if amount is not None:
            amount = self._check_amount(amount)
            if amount > record.amount:
                raise InvalidPaymentError(self.instance, "amount", "is more than was authorized")
        found = self._capture(record, amount)
        return self._apply(
            record.id, found.state, provider_status=found.provider_status, captured=amount
        )

    def cancel(self, payment_id: uuid.UUID | str) -> PaymentRecord:
        """Cancel a payment before money moved (``pending``, ``authorized`` or ``failed``)."""
        record = self.get(payment_id)
        check_transition(
            record.state, PaymentState.CANCELED, instance=self.instance, payment_id=str(record.id)
        )
        if record.state == PaymentState.CANCELED:
            return record
        found = self._cancel(record)
        return self._apply(record.id, found.state, provider_status=found.provider_status)

    def refund(
        self,
        payment_id: uuid.UUID | str,
        amount: int | None = None,
        *,
        idempotency_key: str,
        reason: str = "",
    ) -> RefundRecord:
        """Refund ``amount`` (default: what remains) of a ``succeeded`` payment, once per key.

        The first call with ``idempotency_key`` reserves it in the idempotency store,
        calls the provider (passing a key derived from it where the provider accepts
        one) and records the refund; a retry with the same key returns that same refund
        without calling the provider. The same key with another payment, amount or
        reason raises :class:`IdempotencyKeyReusedError`.
        """
        record = self.get(payment_id)
        if amount is not None:
            amount = self._check_amount(amount)
        if len(reason) > 500:
            raise InvalidPaymentError(self.instance, "reason", "is longer than 500 characters")
        fingerprint = _digest(f"{record.id}:{amount if amount is not None else 'rest'}:{reason}")

        def at_provider(provider_key: str) -> dict[str, Any]:
            fresh = self.get(record.id)
            if fresh.state not in _REFUNDABLE:
                raise IllegalTransitionError(
                    self.instance, str(fresh.id), fresh.payment_state, PaymentState.REFUNDED
                )
            wanted = fresh.refundable if amount is None else amount
            if wanted > fresh.refundable:
                raise InvalidPaymentError(
                    self.instance, "amount", "is more than the payment has left to refund"
                )
            found = self._refund(fresh, wanted, reason, provider_key)
            return {"provider_id": found.provider_id, "status": found.status, "amount": wanted}

        def in_books(answer: dict[str, Any]) -> str:
            found = ProviderRefund(answer["provider_id"], answer["status"])
            return self._record_refund(
                record.id, int(answer["amount"]), reason, found, idempotency_key
            )

        made = self._once("refund", idempotency_key, fingerprint, at_provider, in_books)
        return self._refund_rows().get(pk=made)

    def transition(self, payment_id: uuid.UUID | str, state: PaymentState | str) -> PaymentRecord:
        """Move a payment to ``state`` in the books only (no provider call), if allowed."""
        return self._apply(self.get(payment_id).id, PaymentState(state))

    # ------------------------------------------------------------------ webhooks

    @property
    def verifies_webhooks(self) -> bool:
        """Tell whether :meth:`verify_webhook` checks a signature (False on ``stub``)."""
        return self.signature_scheme is not None

    def verify_webhook(self, body: bytes, headers: Any) -> WebhookEvent:
        """Bound, verify and parse a webhook; raise on a body that fails any of them.

        ``body`` is the raw request body exactly as received; ``headers`` any mapping
        of its headers. The size is checked before anything reads the body, the
        signature before it is parsed.
        """
        return webhooks.verify_webhook(self, body, headers)

    def handle_webhook(self, body: bytes, headers: Any) -> WebhookEvent:
        """Verify a webhook (:meth:`verify_webhook`) and apply it, once per event id.

        Only this instance's payments and refunds are looked at. An event id already
        applied (a provider retry, a replay of an old event within the tolerance) comes
        back with ``applied=False`` and a ``duplicate`` note, changing nothing; the id is
        reserved in the idempotency store for :data:`EVENT_TTL` seconds, as billing does.
        An event that would break the state machine (a stale or out-of-order delivery)
        changes nothing and comes back with ``applied=False`` and a ``note``.
        """
        return webhooks.handle_webhook(self, body, headers)

    # ------------------------------------------------------------------ internals

    def _once(
        self,
        kind: str,
        key: str,
        fingerprint: str,
        at_provider: Callable[[str], dict[str, Any]],
        in_books: Callable[[dict[str, Any]], str],
    ) -> str:
        """Run ``at_provider`` once per ``key``, then ``in_books`` with its answer; return an id.

        The reservation is committed with the provider's answer as soon as the provider
        has acted, before the local write: if that write fails (a database error, a
        killed worker), a retry with the same key repeats only ``in_books``, which
        upserts by the provider's object id, and never asks the provider again (a
        provider without idempotency keys would act twice). A provider error releases
        the key, as nothing happened there.
        """
        from toolkit_batteries.idempotency import ReservationState

        if not isinstance(key, str) or not key.strip() or len(key) > 255:
            raise InvalidPaymentError(
                self.instance, "idempotency_key", "must be a string of 1 to 255 characters"
            )
        if self.idempotency is None:
            raise PaymentError(
                f"payment.{self.instance}: no idempotency store (call use_idempotency)"
            )
        digest = _digest(f"{self.instance}:{kind}:{key}")
        reservation = self.idempotency.reserve(f"payment:{kind}:{digest}", fingerprint=fingerprint)
        if reservation.state is not ReservationState.NEW:
            if reservation.fingerprint != fingerprint:
                raise IdempotencyKeyReusedError(self.instance, kind)
            if reservation.state is ReservationState.IN_PROGRESS:
                raise OperationInProgressError(self.instance, kind)
            stored = reservation.response
            if "provider" in stored:  # the provider acted; (re)do the local write only
                return in_books(stored["provider"])
            return str(stored["id"])  # a record committed before the two-step form
        try:
            answer = at_provider(f"toolkit-{kind}-{digest[:48]}")
        except BaseException:
            reservation.release()
            raise
        reservation.commit({"provider": answer})
        return in_books(answer)

    def _insert(
        self,
        payment_id: uuid.UUID,
        amount: int,
        currency: str,
        reference: str,
        description: str,
        metadata: dict[str, str],
        found: ProviderPayment,
    ) -> PaymentRecord:
        from django.utils import timezone

        from .models import PaymentRecord

        now = timezone.now()
        row = PaymentRecord(
            id=payment_id,
            instance=self.instance,
            adapter=self.adapter_name,
            provider_id=found.provider_id,
            amount=amount,
            currency=currency,
            state=found.state.value,
            provider_status=found.provider_status[:64],
            reference=reference,
            description=description,
            metadata=metadata,
            provider_data=found.provider_data,
            created_at=now,
            updated_at=now,
        )
        row.save(using=self.database.alias, force_insert=True)
        return row

    def _apply(
        self,
        payment_id: uuid.UUID,
        target: PaymentState,
        *,
        provider_status: str | None = None,
        captured: int | None = None,
    ) -> PaymentRecord:
        """Move the row to ``target`` under a row lock; a same-state move is a no-op."""
        from django.db import transaction
        from django.utils import timezone

        with transaction.atomic(using=self.database.alias):
            row = self._rows().select_for_update().get(pk=payment_id)
            changed = check_transition(
                row.state, target, instance=self.instance, payment_id=str(row.id)
            )
            if not changed and (provider_status is None or provider_status == row.provider_status):
                return row
            row.state = target.value
            if provider_status is not None:
                row.provider_status = provider_status[:64]
            if captured is not None:
                row.amount = captured
            row.updated_at = timezone.now()
            row.save(using=self.database.alias)
            return row

    def _apply_refunded_total(self, payment_id: uuid.UUID, total: int) -> PaymentRecord:
        """Note the provider's running refunded total (refunds made elsewhere count too).

        The figure is kept beside the refund rows (``provider_data["refunded_total"]``)
        and never added to: :meth:`_settle_refunded` takes the larger of it and the
        rows' sum, so a ``charge.refunded`` webhook that arrives before the local
        refund row is written does not count that refund twice.
        """
        from django.db import transaction
        from django.utils import timezone

        with transaction.atomic(using=self.database.alias):
            row = self._rows().select_for_update().get(pk=payment_id)
            data = dict(row.provider_data or {})
            raised = int(total) > int(data.get("refunded_total") or 0)
            if raised:
                data["refunded_total"] = int(total)
                row.provider_data = data
            if not self._settle_refunded(row, timezone.now()) and raised:
                row.save(using=self.database.alias, update_fields=["provider_data"])
            return row

    def _settle_refunded(self, row: PaymentRecord, now: Any) -> bool:
        """Derive ``amount_refunded`` and the state from the refund rows; save if raised.

        The total is the sum of the payment's refunds that have not failed, or the
        provider's reported total when that is larger (refunds made in its dashboard),
        capped at the amount. It only grows. Raises
        :class:`~.states.IllegalTransitionError` when the payment may not be refunded.
        """
        from django.db.models import Sum

        from .models import RefundRecord

        summed = (
            RefundRecord.objects.using(self.database.alias)
            .filter(payment_id=row.pk)
            .exclude(status=RefundRecord.Status.FAILED)
            .aggregate(total=Sum("amount"))["total"]
            or 0
        )
        reported = int((row.provider_data or {}).get("refunded_total") or 0)
        total = min(max(int(summed), reported), row.amount)
        if total <= row.amount_refunded:
            return False
        target = PaymentState.REFUNDED if total >= row.amount else PaymentState.PARTIALLY_REFUNDED
        check_transition(row.state, target, instance=self.instance, payment_id=str(row.id))
        row.amount_refunded = total
        row.state = target.value
        row.updated_at = now
        row.save(using=self.database.alias)
        return True

    def _record_refund(
        self,
        payment_id: uuid.UUID,
        amount: int,
        reason: str,
        found: ProviderRefund,
        idempotency_key: str,
    ) -> str:
        """Upsert the refund row by the provider's refund id, then settle the payment.

        A webhook may have recorded the refund first (with its settled status); this
        write then adds what only the caller knows (reason, key) and counts nothing twice.
        """
        from django.db import transaction
        from django.utils import timezone

        from .models import RefundRecord

        with transaction.atomic(using=self.database.alias):
            row = self._rows().select_for_update().get(pk=payment_id)
            now = timezone.now()
            refund = (
                RefundRecord.objects.using(self.database.alias)
                .filter(payment_id=row.pk, provider_id=found.provider_id)
                .first()
            )
            if refund is None:
                refund = RefundRecord(
                    payment=row,
                    provider_id=found.provider_id,
                    amount=amount,
                    status=found.status,
                    reason=reason,
                    key_hash=_digest(idempotency_key),
                    created_at=now,
                    updated_at=now,
                )
                refund.save(using=self.database.alias, force_insert=True)
            else:
                refund.amount = amount
                refund.reason = refund.reason or reason
                refund.key_hash = _digest(idempotency_key)
                if refund.status == RefundRecord.Status.PENDING:
                    refund.status = found.status
                refund.updated_at = now
                refund.save(using=self.database.alias)
            self._settle_refunded(row, now)
            return str(refund.id)

    def _check_amount(self, amount: Any) -> int:
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise InvalidPaymentError(self.instance, "amount", "must be an integer of minor units")
        if amount <= 0 or amount > MAX_AMOUNT:
            raise InvalidPaymentError(self.instance, "amount", f"must be 1 to {MAX_AMOUNT}")
        return amount

    def _check_currency(self, currency: Any) -> str:
        if not isinstance(currency, str) or not _CURRENCY.fullmatch(currency):
            raise InvalidPaymentError(self.instance, "currency", "must be a 3-letter ISO code")
        return currency.upper()

    def _check_metadata(self, metadata: Mapping[str, str] | None) -> dict[str, str]:
        items = dict(metadata or {})
        if len(items) > 50 or any(
            not isinstance(k, str) or not isinstance(v, str) or len(k) > 40 or len(v) > 500
            for k, v in items.items()
        ):
            raise InvalidPaymentError(
                self.instance, "metadata", "must be at most 50 str keys (40) and str values (500)"
            )
        return items

    def ping(self) -> None:
        """Check the database the rows live in answers."""
        self.database.ping()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} payment.{self.instance} adapter={self.adapter_name!r}>"

    # ------------------------------------------------------------------ primitives

    def _create(self, new: NewPayment) -> ProviderPayment:
        """Create the payment at the provider (``new.idempotency_key`` empty: none)."""
        raise NotImplementedError

    def _retrieve(self, record: PaymentRecord) -> ProviderPayment:
        """Read the payment's current status from the provider."""
        raise NotImplementedError

    def _capture(self, record: PaymentRecord, amount: int | None) -> ProviderPayment:
        """Capture an authorized payment at the provider."""
        raise PaymentNotSupportedError(self.instance, self.adapter_name, "capture")

    def _cancel(self, record: PaymentRecord) -> ProviderPayment:
        """Cancel the payment at the provider."""
        raise NotImplementedError

    def _refund(
        self, record: PaymentRecord, amount: int, reason: str, idempotency_key: str
    ) -> ProviderRefund:
        """Refund ``amount`` at the provider."""
        raise NotImplementedError

    def _parse_event(self, payload: dict[str, Any]) -> WebhookEvent:
        """Turn a verified webhook's JSON object into a :class:`WebhookEvent`."""
        raise NotImplementedError
