"""``payment_a`` (Stripe PaymentIntents) against localstripe, a stateful Stripe emulator.

The wire tests (``test_wire.py``) pin each request's shape against our own server; these
show the adapter works with a server we did not write: objects it creates are real
PaymentIntents whose state machine localstripe drives, refunds are refunds there, and the
webhooks localstripe signs and sends are accepted (and refused under another secret).
What localstripe does not emulate is listed in :mod:`tests.support.localstripe`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolkit_batteries.payment import PaymentProviderError, PaymentState, WebhookSignatureError

from ...support.localstripe import CARD_DECLINED, LocalStripe, WebhookRecorder
from .conftest import WEBHOOK_SECRETS


@pytest.fixture(scope="module")
def stripe_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStripe]:
    with LocalStripe(tmp_path_factory.mktemp("localstripe")) as server:
        yield server


@pytest.fixture(scope="module")
def recorder(stripe_server: LocalStripe) -> Iterator[WebhookRecorder]:
    with WebhookRecorder() as receiving:
        stripe_server.send_webhooks_to(receiving.url, WEBHOOK_SECRETS["payment_a"])
        yield receiving


@pytest.fixture
def payment(make_payment, stripe_server):
    return make_payment("payment_a", server=stripe_server).payment


def test_a_payment_is_a_real_payment_intent_that_the_customer_pays(payment, stripe_server):
    record = payment.create(3000, "EUR", metadata={"order": "o-17"})
    assert record.state == PaymentState.PENDING and record.client_secret
    intent = stripe_server.intent(record.provider_id)
    assert (intent["amount"], intent["currency"], intent["capture_method"]) == (
        3000,
        "eur",
        "automatic",
    )
    assert intent["metadata"] == {"order": "o-17", "toolkit_payment_id": str(record.id)}
    assert intent["client_secret"] == record.client_secret
    stripe_server.customer_pays(record.provider_id)
    assert payment.sync(record.id).state == PaymentState.SUCCEEDED


def test_a_declined_card_leaves_the_payment_failed(payment, stripe_server):
    record = payment.create(1200, "EUR")
    stripe_server.customer_pays(record.provider_id, card=CARD_DECLINED)
    assert stripe_server.intent(record.provider_id)["status"] == "requires_payment_method"
    assert payment.sync(record.id).state == PaymentState.FAILED


def test_manual_capture_authorizes_then_captures_part(payment, stripe_server):
    record = payment.create(5000, "EUR", capture=False)
    stripe_server.customer_pays(record.provider_id)
    assert stripe_server.intent(record.provider_id)["status"] == "requires_capture"
    assert payment.sync(record.id).state == PaymentState.AUTHORIZED
    captured = payment.capture(record.id, 4000)
    assert captured.state == PaymentState.SUCCEEDED
    assert stripe_server.intent(record.provider_id)["status"] == "succeeded"
    charge = stripe_server.charge_of(record.provider_id)
    # As Stripe does, the part not captured is released as a refund of the charge.
    assert charge["captured"] and charge["amount"] - charge["amount_refunded"] == 4000


def test_cancel_cancels_the_intent(payment, stripe_server):
    record = payment.create(700, "EUR")
    assert payment.cancel(record.id).state == PaymentState.CANCELED
    assert stripe_server.intent(record.provider_id)["status"] == "canceled"


def test_refunds_are_made_once_per_key_at_the_provider(payment, stripe_server):
    record = payment.create(3000, "EUR")
    stripe_server.customer_pays(record.provider_id)
    payment.sync(record.id)
    first = payment.refund(record.id, 1000, idempotency_key="refund-1")
    again = payment.refund(record.id, 1000, idempotency_key="refund-1")
    assert again.id == first.id
    made = stripe_server.refunds_of(record.provider_id)
    assert [(r["id"], r["amount"]) for r in made] == [(first.provider_id, 1000)]
    rest = payment.refund(record.id, idempotency_key="refund-2")
    assert rest.amount == 2000
    assert payment.get(record.id).state == PaymentState.REFUNDED
    assert sorted(r["amount"] for r in stripe_server.refunds_of(record.provider_id)) == [1000, 2000]


def test_a_key_the_provider_refuses_is_a_provider_error_without_the_key(
    make_payment, stripe_server
):
    wrong = "pk_test_aPublishableKeyNotASecret42"  # localstripe, like Stripe, wants sk_
    payment = make_payment("payment_a", server=stripe_server, secret_key=wrong).payment
    with pytest.raises(PaymentProviderError) as caught:
        payment.create(900, "EUR")
    assert caught.value.status == 401
    assert wrong not in f"{caught.value} {caught.value!r}"
    assert not payment._rows().exists()  # nothing recorded for a payment that was not made


def test_webhooks_signed_by_localstripe_are_accepted(payment, stripe_server, recorder):
    record = payment.create(2500, "EUR")
    stripe_server.customer_pays(record.provider_id)
    body, headers = recorder.event("payment_intent.succeeded", record.provider_id)
    event = payment.handle_webhook(body, headers)
    assert event.provider_id == record.provider_id
    assert payment.get(record.id).state == PaymentState.SUCCEEDED


def test_a_localstripe_webhook_under_another_secret_is_refused(
    make_payment, stripe_server, recorder
):
    other = make_payment("payment_a", server=stripe_server, webhook_secret="whsec_another_one_9")
    record = other.payment.create(400, "EUR")
    stripe_server.customer_pays(record.provider_id)
    body, headers = recorder.event("payment_intent.succeeded", record.provider_id)
    with pytest.raises(WebhookSignatureError):
        other.payment.handle_webhook(body, headers)
    assert other.payment.get(record.id).state == PaymentState.PENDING
