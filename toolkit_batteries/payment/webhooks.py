"""Webhooks of the payment service: bound, verify and parse a delivery, then apply it once.

:class:`~.base.Payment` writes rows and enforces the state machine; these functions (its
webhook methods delegate here) are the inbound half it shares with every adapter: the
body's size is checked before anything reads it, the signature (the adapter's
``signature_scheme``) before it is parsed, the event id reserved in the idempotency store
so a provider's retry applies once, and a stale or out-of-order event changes nothing.
They use the row helpers (``find``, ``_apply``, ``_apply_refunded_total``,
``_settle_refunded``) of the service they are given.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core import webhook_signatures
from toolkit_batteries.core.webhook_signatures import header_value

from .errors import WebhookPayloadError, WebhookSignatureError, WebhookTooLargeError
from .states import IllegalTransitionError
from .values import WebhookEvent, _digest

if TYPE_CHECKING:
    from .base import Payment
    from .models import PaymentRecord

__all__ = ["EVENT_TTL", "apply_event", "handle_webhook", "verify_webhook"]

#: Seconds a webhook event id stays reserved (providers retry for up to three days).
EVENT_TTL = 4 * 24 * 3600.0


def verify_webhook(service: Payment, body: bytes, headers: Any) -> WebhookEvent:
    """Bound, verify and parse a webhook: the body of :meth:`.Payment.verify_webhook`."""
    if not isinstance(body, bytes | bytearray | memoryview):
        raise TypeError("body must be the raw request bytes")
    raw = bytes(body)
    if len(raw) > service.max_webhook_bytes:
        raise WebhookTooLargeError(service.instance, service.max_webhook_bytes)
    scheme = service.signature_scheme
    if scheme is not None:
        webhook_signatures.verify(
            scheme,
            header_value(headers, scheme.header),
            raw,
            service._webhook_secret,
            tolerance=service.webhook_tolerance,
            now=service.clock,
            fail=lambda reason: WebhookSignatureError(service.instance, reason),
        )
    try:
        payload = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise WebhookPayloadError(service.instance, "is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookPayloadError(service.instance, "is not a JSON object")
    try:
        return service._parse_event(payload)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise WebhookPayloadError(service.instance, "does not have the provider's shape") from None


def handle_webhook(service: Payment, body: bytes, headers: Any) -> WebhookEvent:
    """Verify and apply a webhook once: the body of :meth:`.Payment.handle_webhook`."""
    event = service.verify_webhook(body, headers)
    reservation = None
    if service.idempotency is not None and event.id:
        key = f"payment:event:{_digest(f'{service.instance}:{event.id}')}"
        reservation = service.idempotency.reserve(key, EVENT_TTL)
        if not reservation.owned:
            return dataclasses.replace(event, note="duplicate: this event was already applied")
    try:
        outcome = apply_event(service, event)
    except BaseException:
        if reservation is not None:
            reservation.release()
        raise
    if reservation is not None:
        if outcome.payment is None:
            reservation.release()  # nothing of ours: a later resend may still apply
        else:
            reservation.commit({"applied": outcome.applied})
    return outcome


def apply_event(service: Payment, event: WebhookEvent) -> WebhookEvent:
    """Apply a verified event to this instance's rows (see :meth:`.Payment.handle_webhook`)."""
    record = service.find(event.provider_id)
    if event.refund_id:
        before = record.updated_at if record is not None else None
        updated = _apply_refund_event(service, event, record)
        if updated is None:
            return dataclasses.replace(event, note="no refund of this instance has that id")
        return dataclasses.replace(event, payment=updated, applied=updated.updated_at != before)
    if not event.provider_id:
        return event
    if record is None:
        return dataclasses.replace(event, note="no payment of this instance has that id")
    if event.state is None and event.amount_refunded is None:
        return dataclasses.replace(event, payment=record)
    try:
        if event.amount_refunded is not None:
            updated = service._apply_refunded_total(record.id, event.amount_refunded)
        else:
            assert event.state is not None
            updated = service._apply(record.id, event.state)
    except IllegalTransitionError as exc:
        return dataclasses.replace(event, payment=record, note=f"ignored: {exc}")
    return dataclasses.replace(
        event, payment=updated, applied=updated.updated_at != record.updated_at
    )


def _apply_refund_event(service: Payment, event: WebhookEvent, record: PaymentRecord | None) -> Any:
    """Record a refund webhook (upsert by refund id); return the payment row or ``None``.

    A refund this instance does not know yet is recorded when the event carries its
    amount and names one of this instance's payments (a refund made elsewhere, or
    one whose local write has not happened yet); otherwise only a known refund's
    status moves. Refund rows of other instances are never looked at.
    """
    from django.db import transaction
    from django.utils import timezone

    from .models import RefundRecord

    status = event.refund_status
    if status and status not in RefundRecord.Status.values:
        status = ""
    alias = service.database.alias
    with transaction.atomic(using=alias):
        if record is None:
            known = service._refund_rows().filter(provider_id=event.refund_id).first()
            if known is None:
                return None
            record = known.payment
        row = service._rows().select_for_update().get(pk=record.pk)
        now = timezone.now()
        refund = (
            RefundRecord.objects.using(alias)
            .filter(payment_id=row.pk, provider_id=event.refund_id)
            .first()
        )
        if refund is None:
            if event.refund_amount is None or event.refund_amount <= 0:
                return row
            RefundRecord(
                payment=row,
                provider_id=event.refund_id,
                amount=min(int(event.refund_amount), row.amount),
                status=status or RefundRecord.Status.PENDING,
                created_at=now,
                updated_at=now,
            ).save(using=alias, force_insert=True)
        elif status and status != refund.status:
            refund.status = status
            refund.updated_at = now
            refund.save(using=alias, update_fields=["status", "updated_at"])
        service._settle_refunded(row, now)
        return row
