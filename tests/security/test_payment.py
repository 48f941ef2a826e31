"""Payment battery hardening (issue 23: items 2, 5, 6, 12, 15), on the real stack.

Provider adapters talk to the local provider servers of ``tests/batteries/payment``;
rows live in a migrated SQLite file, or the real PostgreSQL server for ``-postgres``
variants. Webhooks are signed here, independently of the battery's code.
"""

from __future__ import annotations

import json
import secrets
import uuid

import pytest
from django.core import checks
from django.db import DatabaseError, connections
from django.test import Client, override_settings
from django.urls import path

from tests.batteries.payment import conftest as payment_fixtures
from toolkit_batteries.payment import PaymentState
from toolkit_batteries.payment.views import StubWebhookView

#: The payment suite's ``make_payment`` fixture, shared with this module.
make_payment = payment_fixtures.make_payment

OTHER_SECRETS = {
    "payment_a": "whsec_sandboxInstanceSecret7c1e",
    "payment_b": "pdl_ntfset_sandboxInstanceSecret2d",
}


def _event_for_state(opened, record, outcome: str) -> dict:
    """Return the provider's event moving ``record`` to ``outcome`` (server object untouched)."""
    if opened.variant == "payment_a":
        kind = {
            "failed": "payment_intent.payment_failed",
            "processing": "payment_intent.processing",
            "succeeded": "payment_intent.succeeded",
        }[outcome]
        status = {"failed": "requires_payment_method", "processing": "processing"}.get(
            outcome, outcome
        )
        return {
            "id": f"evt_{secrets.token_hex(8)}",
            "object": "event",
            "type": kind,
            "data": {"object": {"id": record.provider_id, "status": status}},
        }
    kind = {
        "failed": "transaction.payment_failed",
        "processing": "transaction.billed",
        "succeeded": "transaction.completed",
    }[outcome]
    return {
        "event_id": f"evt_{secrets.token_hex(8)}",
        "event_type": kind,
        "data": {"id": record.provider_id, "status": "billed"},
    }


# ------------------------------------------------------------------ item 2: instances


@pytest.mark.parametrize(
    "variant", ["payment_a", "payment_b", "payment_a-postgres", "payment_b-postgres"]
)
def test_an_event_signed_with_another_instances_secret_changes_nothing_here(make_payment, variant):
    adapter = variant.partition("-")[0]
    live = make_payment(variant, others={"sandbox": {"webhook_secret": OTHER_SECRETS[adapter]}})
    sandbox = live.container.payment("sandbox")
    record = live.payment.create(5000, "usd")

    # A correctly signed event (the sandbox instance's own secret) naming a live payment.
    paid = _event_for_state(live, record, "succeeded")
    body, headers = live.signed(paid, secret=OTHER_SECRETS[adapter])
    event = sandbox.handle_webhook(body, headers)
    assert event.payment is None and not event.applied
    assert "no payment of this instance" in event.note
    assert live.payment.get(record.id).state == PaymentState.PENDING, "moved by another instance"

    record = live.pay(record)
    refund = live.payment.refund(record.id, 1000, idempotency_key="live-refund-1")
    before = live.payment.get(record.id)
    if adapter == "payment_a":
        refund_event = {
            "id": f"evt_{secrets.token_hex(8)}",
            "type": "refund.updated",
            "data": {"object": {"id": refund.provider_id, "status": "failed", "amount": 1000}},
        }
        total_event = {
            "id": f"evt_{secrets.token_hex(8)}",
            "type": "charge.refunded",
            "data": {
                "object": {
                    "id": "ch_1",
                    "amount_refunded": 5000,
                    "payment_intent": record.provider_id,
                }
            },
        }
    else:
        refund_event = {
            "event_id": f"evt_{secrets.token_hex(8)}",
            "event_type": "adjustment.updated",
            "data": {"id": refund.provider_id, "action": "refund", "status": "rejected"},
        }
        total_event = None
    body, headers = live.signed(refund_event, secret=OTHER_SECRETS[adapter])
    assert sandbox.handle_webhook(body, headers).payment is None
    if total_event is not None:
        body, headers = live.signed(total_event, secret=OTHER_SECRETS[adapter])
        assert sandbox.handle_webhook(body, headers).payment is None

    # Nothing of the live instance moved (its row, read back from the database).
    after = live.payment.get(record.id)
    assert (after.state, after.amount_refunded, after.updated_at) == (
        before.state,
        before.amount_refunded,
        before.updated_at,
    )
    assert after.state == PaymentState.PARTIALLY_REFUNDED and after.amount_refunded == 1000
    assert [r.status for r in live.payment.refunds(record.id)] == [refund.status]
    assert sandbox.find(record.provider_id) is None
    # Signed for the live instance, the same refund news does apply there.
    body, headers = live.signed(refund_event)
    assert live.payment.handle_webhook(body, headers).payment.id == record.id
    assert [r.status for r in live.payment.refunds(record.id)] == ["failed"]


# ------------------------------------------------------------------ item 5: refund race


def _deliver_from_provider(opened, payload: dict) -> None:
    body, headers = opened.signed(payload)
    opened.payment.handle_webhook(body, headers)


def test_a_charge_refunded_webhook_before_the_local_write_is_not_counted_twice(make_payment):
    opened = make_payment("payment_a")
    record = opened.pay(opened.payment.create(10000, "usd"))
    seen = {"total": 0}

    def provider_sends_its_webhook_first(refund: dict) -> None:
        seen["total"] += refund["amount"]
        _deliver_from_provider(
            opened,
            {
                "id": f"evt_{secrets.token_hex(8)}",
                "type": "charge.refunded",
                "data": {
                    "object": {
                        "id": "ch_race",
                        "object": "charge",
                        "amount": 10000,
                        "amount_refunded": seen["total"],
                        "payment_intent": record.provider_id,
                    }
                },
            },
        )

    opened.server.on_refund = provider_sends_its_webhook_first
    opened.payment.refund(record.id, 3000, idempotency_key="race-1")
    row = opened.payment.get(record.id)
    assert row.amount_refunded == 3000, "the refund was counted twice"
    assert row.state == PaymentState.PARTIALLY_REFUNDED
    assert [r.amount for r in opened.payment.refunds(record.id)] == [3000]
    # A later legitimate refund of all that is left is accepted, and ends the payment.
    opened.payment.refund(record.id, 7000, idempotency_key="race-2")
    row = opened.payment.get(record.id)
    assert (row.amount_refunded, row.state) == (10000, PaymentState.REFUNDED)


def test_a_refund_event_before_the_local_write_is_upserted_by_the_refund_id(make_payment):
    opened = make_payment("payment_b")
    record = opened.pay(opened.payment.create(8000, "usd"))

    def provider_approves_before_answering(adjustment: dict) -> None:
        _deliver_from_provider(
            opened,
            {
                "event_id": f"evt_{secrets.token_hex(8)}",
                "event_type": "adjustment.updated",
                "data": {
                    **adjustment,
                    "status": "approved",
                    "totals": {"total": "8000"},
                },
            },
        )

    opened.server.on_refund = provider_approves_before_answering
    refund = opened.payment.refund(record.id, idempotency_key="race-b")
    rows = opened.payment.refunds(record.id)
    assert [(r.provider_id, r.amount, r.status) for r in rows] == [
        (refund.provider_id, 8000, "succeeded")
    ], "the approval that came first was lost or the refund recorded twice"
    row = opened.payment.get(record.id)
    assert (row.amount_refunded, row.state) == (8000, PaymentState.REFUNDED)


# ------------------------------------------------------------------ item 6: local write fails


def _fail_refund_inserts(opened, on: bool) -> None:
    with connections[opened.payment.database.alias].cursor() as cursor:
        if on:
            cursor.execute(
                "CREATE TRIGGER toolkit_test_refund_fails BEFORE INSERT ON toolkit_payment_refund "
                "BEGIN SELECT RAISE(ABORT, 'the disk is full'); END"
            )
        else:
            cursor.execute("DROP TRIGGER toolkit_test_refund_fails")


@pytest.mark.parametrize(
    ("variant", "refund_path"), [("payment_b", "/adjustments"), ("payment_a", "/v1/refunds")]
)
def test_a_retry_after_the_local_write_failed_repeats_only_the_local_write(
    make_payment, variant, refund_path
):
    opened = make_payment(variant)
    record = opened.pay(opened.payment.create(4000, "usd"))
    _fail_refund_inserts(opened, True)
    with pytest.raises(DatabaseError):
        opened.payment.refund(record.id, idempotency_key="refund-order-9")
    assert opened.provider_calls("POST", refund_path) == 1  # the provider acted
    assert opened.payment.refunds(record.id) == []
    _fail_refund_inserts(opened, False)

    refund = opened.payment.refund(record.id, idempotency_key="refund-order-9")
    again = opened.payment.refund(record.id, idempotency_key="refund-order-9")
    assert opened.provider_calls("POST", refund_path) == 1, "the provider refunded twice"
    assert again.id == refund.id and refund.amount == 4000
    assert len(opened.payment.refunds(record.id)) == 1
    assert opened.payment.get(record.id).state == PaymentState.REFUNDED


# ------------------------------------------------------------------ item 12: event ids


@pytest.mark.parametrize("variant", ["payment_a", "payment_b", "payment_a-postgres"])
def test_a_replayed_old_event_is_not_applied_again(make_payment, variant):
    opened = make_payment(variant)
    record = opened.payment.create(2500, "usd")
    declined = _event_for_state(opened, record, "failed")
    body, headers = opened.signed(declined)
    assert opened.payment.handle_webhook(body, headers).applied
    later = _event_for_state(opened, record, "processing")
    body, headers = opened.signed(later)
    assert opened.payment.handle_webhook(body, headers).applied
    assert opened.payment.get(record.id).state == PaymentState.PENDING

    # The old decline, captured and re-sent (signed afresh: inside the tolerance).
    body, headers = opened.signed(declined)
    replay = opened.payment.handle_webhook(body, headers)
    assert not replay.applied and "duplicate" in replay.note
    assert opened.payment.get(record.id).state == PaymentState.PENDING


# ------------------------------------------------------------------ item 15: the stub


def _check_ids(toolkit: dict, *, deploy: bool) -> list[str]:
    with override_settings(TOOLKIT=toolkit):
        found = checks.run_checks(tags=["toolkit"], include_deployment_checks=deploy)
    return [m.id for m in found if m.id.startswith("toolkit_payment.")]


def test_the_stub_adapter_outside_development_is_a_deploy_check_error(monkeypatch):
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    assert _check_ids({}, deploy=True) == ["toolkit_payment.E005"]  # stub is the default
    assert _check_ids({"payment": {"adapter": "stub"}}, deploy=False) == []
    provider = {"adapter": "payment_a", "options": {"secret_key": "k", "webhook_secret": "w"}}
    assert _check_ids({"payment": provider}, deploy=True) == []
    monkeypatch.setenv("TOOLKIT_ENV", "dev")
    assert _check_ids({}, deploy=True) == []


_stub_view: dict = {}
urlpatterns = [path("hooks/stub", lambda request: _stub_view["view"](request))]


def test_the_stub_webhook_view_never_marks_paid_on_an_unsigned_post_outside_development(
    make_payment, monkeypatch
):
    opened = make_payment("stub")
    record = opened.payment.create(1000, "usd")
    _stub_view["view"] = StubWebhookView.as_view(service=opened.payment)
    body = json.dumps(
        {
            "id": f"evt_{uuid.uuid4().hex}",
            "type": "payment.succeeded",
            "payment_id": record.provider_id,
        }
    )
    client = Client()
    with override_settings(ROOT_URLCONF=__name__, DEBUG=False):
        monkeypatch.delenv("TOOLKIT_ENV", raising=False)
        refused = client.post("/hooks/stub", body, content_type="application/json")
        assert refused.status_code == 403
        assert "outside development" in refused.json()["error"]["message"]
        assert opened.payment.get(record.id).state == PaymentState.PENDING
        monkeypatch.setenv("TOOLKIT_ENV", "development")
        accepted = client.post("/hooks/stub", body, content_type="application/json")
        assert accepted.status_code == 200
        assert opened.payment.get(record.id).state == PaymentState.SUCCEEDED
    _stub_view.clear()
