"""One contract, run on ``stub``, ``payment_a`` and ``payment_b``."""

from __future__ import annotations

import json
import threading

import pytest

from toolkit_batteries.payment import (
    IdempotencyKeyReusedError,
    IllegalTransitionError,
    InvalidPaymentError,
    OperationInProgressError,
    Payment,
    PaymentNotFoundError,
    PaymentState,
    WebhookTooLargeError,
)
from toolkit_batteries.payment.models import PaymentRecord, RefundRecord


class TestPaymentContract:
    def test_opens_as_the_configured_adapter(self, opened):
        assert isinstance(opened.payment, Payment)
        assert opened.payment.adapter_name == opened.variant
        assert opened.payment.verifies_webhooks is (opened.variant != "stub")

    def test_a_new_payment_is_pending_and_recorded(self, opened):
        record = opened.payment.create(1999, "eur", reference="order-17", metadata={"cart": "7"})
        assert record.state == PaymentState.PENDING
        assert (record.amount, record.currency, record.reference) == (1999, "EUR", "order-17")
        assert record.adapter == opened.variant and record.provider_id
        row = PaymentRecord.objects.using(opened.payment.database.alias).get(pk=record.id)
        assert row.state == "pending" and row.metadata == {"cart": "7"}
        assert opened.payment.get(str(record.id)).provider_id == record.provider_id
        assert opened.payment.find(record.provider_id).id == record.id

    def test_bad_arguments_are_refused_before_any_provider_call(self, opened):
        for amount, currency in (
            (0, "eur"),
            (-5, "eur"),
            (10.5, "eur"),
            (True, "eur"),
            (100, "euro"),
            (100, "e1r"),
        ):
            with pytest.raises(InvalidPaymentError):
                opened.payment.create(amount, currency)
        with pytest.raises(InvalidPaymentError, match="metadata"):
            opened.payment.create(100, "eur", metadata={"k": 5})
        assert opened.server is None or opened.server.seen == []
        assert PaymentRecord.objects.using(opened.payment.database.alias).count() == 0

    def test_unknown_payment_is_not_found(self, opened):
        with pytest.raises(PaymentNotFoundError):
            opened.payment.get("0b7e4a1e-6f35-4bb0-9a43-8f0e4b3f2b1c")
        with pytest.raises(PaymentNotFoundError):
            opened.payment.get("not-a-uuid")

    def test_a_webhook_moves_pending_to_succeeded(self, opened):
        record = opened.payment.create(2500, "usd")
        paid = opened.pay(record)
        assert paid.state == PaymentState.SUCCEEDED
        # The same delivery again is a no-op, not an error.
        body, headers = opened.signed(opened.event(record, "succeeded"))
        event = opened.payment.handle_webhook(body, headers)
        assert event.payment.id == record.id and event.applied is False

    def test_refund_is_idempotent_one_provider_call(self, opened):
        record = opened.pay(opened.payment.create(3000, "usd"))
        first = opened.payment.refund(record.id, 1000, idempotency_key="refund-1")
        again = opened.payment.refund(record.id, 1000, idempotency_key="refund-1")
        assert isinstance(first, RefundRecord) and again.id == first.id
        refunds = RefundRecord.objects.using(opened.payment.database.alias)
        assert refunds.count() == 1
        path = {"payment_a": "/v1/refunds", "payment_b": "/adjustments"}.get(opened.variant)
        assert opened.provider_calls("POST", path) == (0 if path is None else 1)
        row = opened.payment.get(record.id)
        assert row.state == PaymentState.PARTIALLY_REFUNDED and row.amount_refunded == 1000

    def test_concurrent_refunds_with_one_key_make_one_refund(self, opened):
        record = opened.pay(opened.payment.create(3000, "usd"))
        results: list[object] = []
        lock = threading.Lock()
        start = threading.Barrier(8)

        def worker() -> None:
            from django.db import connections

            try:
                start.wait(10)
                try:
                    found: object = opened.payment.refund(record.id, 700, idempotency_key="race")
                except OperationInProgressError as exc:
                    found = exc
                with lock:
                    results.append(found)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(results) == 8
        refunds = {r.id for r in results if isinstance(r, RefundRecord)}
        assert len(refunds) == 1  # every caller that got a refund got the same one
        assert opened.payment.get(record.id).amount_refunded == 700
        assert len(opened.payment.refunds(record.id)) == 1
        path = {"payment_a": "/v1/refunds", "payment_b": "/adjustments"}.get(opened.variant)
        assert opened.provider_calls("POST", path) == (0 if path is None else 1)

    def test_reusing_a_refund_key_for_another_amount_is_refused(self, opened):
        record = opened.pay(opened.payment.create(3000, "usd"))
        opened.payment.refund(record.id, 1000, idempotency_key="refund-k")
        with pytest.raises(IdempotencyKeyReusedError):
            opened.payment.refund(record.id, 2000, idempotency_key="refund-k")
        assert opened.payment.get(record.id).amount_refunded == 1000

    def test_full_refund_ends_refunded_and_final(self, opened):
        record = opened.pay(opened.payment.create(1200, "gbp"))
        refund = opened.payment.refund(record.id, idempotency_key="all-of-it")
        assert refund.amount == 1200
        row = opened.payment.get(record.id)
        assert row.state == PaymentState.REFUNDED and row.refundable == 0
        with pytest.raises(IllegalTransitionError, match="refunded"):
            opened.payment.refund(record.id, 1, idempotency_key="one-more")
        with pytest.raises(IllegalTransitionError):
            opened.payment.cancel(record.id)

    def test_refund_over_the_remainder_is_refused(self, opened):
        record = opened.pay(opened.payment.create(1000, "usd"))
        with pytest.raises(InvalidPaymentError, match="amount"):
            opened.payment.refund(record.id, 1001, idempotency_key="too-much")
        assert opened.payment.get(record.id).state == PaymentState.SUCCEEDED
        # The refused attempt released its key: a corrected retry under it works.
        assert opened.payment.refund(record.id, 1000, idempotency_key="too-much").amount == 1000

    def test_refunding_a_pending_payment_is_an_illegal_transition(self, opened):
        record = opened.payment.create(1000, "usd")
        with pytest.raises(IllegalTransitionError) as caught:
            opened.payment.refund(record.id, idempotency_key="early")
        assert "pending" in str(caught.value) and caught.value.code == "failed_precondition"
        assert opened.provider_calls("POST", "/v1/refunds") == 0
        assert opened.provider_calls("POST", "/adjustments") == 0

    def test_cancel_a_pending_payment(self, opened):
        record = opened.payment.create(1000, "usd")
        canceled = opened.payment.cancel(record.id)
        assert canceled.state == PaymentState.CANCELED
        assert opened.payment.cancel(record.id).state == PaymentState.CANCELED  # no-op
        with pytest.raises(IllegalTransitionError):
            opened.payment.transition(record.id, PaymentState.SUCCEEDED)

    def test_a_stale_webhook_is_ignored_not_applied(self, opened):
        record = opened.payment.create(1000, "usd")
        opened.payment.cancel(record.id)
        body, headers = opened.signed(
            {**opened.event(record, "canceled"), **_kind_of(opened, "succeeded")}
        )
        event = opened.payment.handle_webhook(body, headers)
        assert event.applied is False and "ignored" in event.note
        assert opened.payment.get(record.id).state == PaymentState.CANCELED

    def test_an_oversize_webhook_is_refused_before_parsing(self, opened):
        limit = opened.payment.max_webhook_bytes
        assert limit == 1024 * 1024
        body = b"{" * (limit + 1)  # would not even parse
        with pytest.raises(WebhookTooLargeError) as caught:
            opened.payment.handle_webhook(body, {})
        assert caught.value.code == "payload_too_large"

    def test_keyed_create_returns_the_first_payment(self, opened):
        first = opened.payment.create(700, "usd", idempotency_key="cart-9")
        again = opened.payment.create(700, "usd", idempotency_key="cart-9")
        assert again.id == first.id
        assert PaymentRecord.objects.using(opened.payment.database.alias).count() == 1
        with pytest.raises(IdempotencyKeyReusedError):
            opened.payment.create(800, "usd", idempotency_key="cart-9")


def _kind_of(opened, outcome: str) -> dict:
    """Return the event-type member saying ``outcome`` in the provider's shape."""
    if opened.variant == "stub":
        return {"type": f"payment.{outcome}"}
    if opened.variant == "payment_a":
        return {"type": f"payment_intent.{outcome}"}
    return {"event_type": "transaction.completed"}


def test_events_serialise_as_json(make_payment):
    opened = make_payment("stub")
    record = opened.payment.create(100, "usd")
    body, headers = opened.signed(opened.event(record, "succeeded"))
    event = opened.payment.handle_webhook(body, headers)
    assert json.loads(body)["payment_id"] == record.provider_id
    assert event.state == PaymentState.SUCCEEDED and event.applied


def test_capturing_a_payment_that_is_not_authorized_is_refused(make_payment):
    opened = make_payment("payment_a")
    record = opened.payment.create(1000, "usd")
    with pytest.raises(IllegalTransitionError, match="cannot be captured: it is pending"):
        opened.payment.capture(record.id)
    assert opened.provider_calls("POST", f"/v1/payment_intents/{record.provider_id}/capture") == 0
    held = opened.deliver(opened.payment.create(1000, "usd", capture=False), "authorized")
    opened.payment.capture(held.id)
    with pytest.raises(IllegalTransitionError, match="it is succeeded"):
        opened.payment.capture(held.id)
