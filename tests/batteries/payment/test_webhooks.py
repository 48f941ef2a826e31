"""Webhook signatures (computed here, independently), tolerance, size, and the DRF views."""

from __future__ import annotations

import json
import logging
import time

import pytest
from django.test import Client, override_settings
from django.urls import path

from toolkit_batteries.payment import (
    PaymentState,
    WebhookPayloadError,
    WebhookSignatureError,
)
from toolkit_batteries.payment.views import (
    PaddlePaymentWebhookView,
    PaymentWebhookView,
    StripePaymentWebhookView,
    StubWebhookView,
)

from .conftest import ALL_SECRETS, WEBHOOK_SECRETS

SIGNED = ("payment_a", "payment_b")


@pytest.mark.parametrize("variant", SIGNED)
def test_a_signed_delivery_verifies_and_applies(make_payment, variant):
    opened = make_payment(variant)
    record = opened.payment.create(1000, "usd")
    body, headers = opened.signed(opened.event(record, "succeeded"))
    event = opened.payment.handle_webhook(body, headers)
    assert event.applied and event.state == PaymentState.SUCCEEDED
    assert event.payment.id == record.id and event.id.startswith("evt_")


@pytest.mark.parametrize("variant", SIGNED)
def test_wrong_secret_missing_header_and_tampered_body_are_refused(make_payment, variant):
    opened = make_payment(variant)
    record = opened.payment.create(1000, "usd")
    payload = opened.event(record, "succeeded")
    body, headers = opened.signed(payload, secret="whsec_not_the_right_one")
    with pytest.raises(WebhookSignatureError, match="no signature matches"):
        opened.payment.handle_webhook(body, headers)
    with pytest.raises(WebhookSignatureError, match="missing"):
        opened.payment.handle_webhook(body, {})
    body, headers = opened.signed(payload)
    with pytest.raises(WebhookSignatureError):
        opened.payment.handle_webhook(body + b" ", headers)  # one byte more
    assert opened.payment.get(record.id).state == PaymentState.PENDING


@pytest.mark.parametrize("variant", SIGNED)
def test_timestamp_tolerance_both_ways(make_payment, variant):
    opened = make_payment(variant)
    now = 1_800_000_000
    opened.payment.clock = lambda: now
    record = opened.payment.create(1000, "usd")
    payload = opened.event(record, "succeeded")
    for stamp in (now - 301, now + 301):
        body, headers = opened.signed(payload, timestamp=stamp)
        with pytest.raises(WebhookSignatureError, match="tolerance"):
            opened.payment.handle_webhook(body, headers)
    body, headers = opened.signed(payload, timestamp=now - 299)
    assert opened.payment.handle_webhook(body, headers).applied


def test_tolerance_is_an_option(make_payment):
    opened = make_payment("payment_a", webhook_tolerance="10s")
    assert opened.payment.webhook_tolerance == 10.0
    record = opened.payment.create(1000, "usd")
    body, headers = opened.signed(
        opened.event(record, "succeeded"), timestamp=int(time.time()) - 60
    )
    with pytest.raises(WebhookSignatureError, match="tolerance"):
        opened.payment.handle_webhook(body, headers)


def test_a_rolled_secret_header_with_two_signatures_passes(make_payment):
    opened = make_payment("payment_a")
    record = opened.payment.create(1000, "usd")
    body, good = opened.signed(opened.event(record, "succeeded"))
    stamp, v1 = good["Stripe-Signature"].split(",")
    header = f"{stamp},v1={'0' * 64},{v1},v0=ignored"
    assert opened.payment.handle_webhook(body, {"stripe-signature": header}).applied


def test_a_verified_body_that_is_not_the_providers_shape_is_a_payload_error(make_payment):
    opened = make_payment("payment_b")
    for payload in (b"not json", b"[1, 2]", json.dumps({"event_type": "x"}).encode()):
        body, headers = opened.signed(payload)
        with pytest.raises(WebhookPayloadError):
            opened.payment.handle_webhook(body, headers)


def test_refund_webhooks_settle_refund_rows(make_payment):
    opened = make_payment("payment_b")
    record = opened.pay(opened.payment.create(1000, "usd"))
    refund = opened.payment.refund(record.id, idempotency_key="r")
    assert refund.status == "pending"
    body, headers = opened.signed(
        {
            "event_id": "evt_adj1",
            "event_type": "adjustment.updated",
            "data": {
                "id": refund.provider_id,
                "action": "refund",
                "status": "approved",
                "transaction_id": record.provider_id,
            },
        }
    )
    opened.payment.handle_webhook(body, headers)
    assert opened.payment.refunds(record.id)[0].status == "succeeded"


def test_a_refund_made_elsewhere_raises_the_refunded_total(make_payment):
    opened = make_payment("payment_a")
    record = opened.pay(opened.payment.create(1000, "usd"))
    body, headers = opened.signed(
        {
            "id": "evt_ch1",
            "type": "charge.refunded",
            "data": {
                "object": {
                    "id": "ch_1",
                    "object": "charge",
                    "amount": 1000,
                    "amount_refunded": 400,
                    "payment_intent": record.provider_id,
                }
            },
        }
    )
    event = opened.payment.handle_webhook(body, headers)
    assert event.applied
    row = opened.payment.get(record.id)
    assert row.state == PaymentState.PARTIALLY_REFUNDED and row.amount_refunded == 400


def test_stub_applies_unsigned_events_and_says_so_at_open(make_payment, caplog):
    with caplog.at_level(logging.WARNING, logger="toolkit.payment"):
        opened = make_payment("stub")
    assert "verifies no webhook" in caplog.text and "holds no funds" in caplog.text
    record = opened.payment.create(1000, "usd")
    body = json.dumps(
        {"id": "evt_1", "type": "payment.succeeded", "payment_id": record.provider_id}
    ).encode()
    assert opened.payment.handle_webhook(body, {}).applied


def test_stub_auto_approve(make_payment):
    opened = make_payment("stub", auto_approve=True)
    assert opened.payment.create(100, "usd").state == PaymentState.SUCCEEDED
    held = opened.payment.create(100, "usd", capture=False)
    assert held.state == PaymentState.AUTHORIZED
    assert opened.payment.capture(held.id).state == PaymentState.SUCCEEDED


# ------------------------------------------------------------------ DRF views

VIEWS = {
    "stub": StubWebhookView,
    "payment_a": StripePaymentWebhookView,
    "payment_b": PaddlePaymentWebhookView,
}
_current: dict = {}


def _view(request, *args, **kwargs):
    return _current["view"](request, *args, **kwargs)


urlpatterns = [path("hooks/payment", _view)]


@pytest.fixture
def hook_client(make_payment):
    def make(variant):
        opened = make_payment(variant)
        _current["view"] = VIEWS[variant].as_view(service=opened.payment)
        return opened, Client(enforce_csrf_checks=True)

    with override_settings(ROOT_URLCONF=__name__):
        yield make
    _current.clear()


@pytest.mark.parametrize("variant", ["stub", *SIGNED])
def test_view_answers_200_400_413(hook_client, variant, caplog, monkeypatch):
    monkeypatch.setenv("TOOLKIT_ENV", "test")  # the stub's view serves development only
    opened, client = hook_client(variant)
    record = opened.payment.create(1000, "usd")
    body, headers = opened.signed(opened.event(record, "succeeded"))
    extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
    with caplog.at_level(logging.DEBUG):
        ok = client.post("/hooks/payment", body, content_type="application/json", **extra)
        assert ok.status_code == 200, ok.content  # no CSRF token, no session: still accepted
        assert ok.json()["received"] is True and ok.json()["applied"] is True
        assert opened.payment.get(record.id).state == PaymentState.SUCCEEDED

        big = client.post(
            "/hooks/payment", b" " * (1024 * 1024 + 1), content_type="application/json", **extra
        )
        assert big.status_code == 413
        assert big.json()["error"]["code"] == "payload_too_large"

        if variant != "stub":
            bad = dict(extra)
            key = next(iter(bad))
            bad[key] = bad[key][:-4] + "0000"
            refused = client.post("/hooks/payment", body, content_type="application/json", **bad)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == "invalid_argument"
            missing = client.post("/hooks/payment", body, content_type="application/json")
            assert missing.status_code == 400 and "missing" in missing.json()["error"]["message"]
        else:
            garbage = client.post("/hooks/payment", b"{", content_type="application/json")
            assert garbage.status_code == 400
    for secret in ALL_SECRETS:
        assert secret not in caplog.text


def test_view_bound_to_another_adapter_refuses(make_payment):
    opened = make_payment("stub")
    view = StripePaymentWebhookView(service=opened.payment)
    with pytest.raises(Exception, match="payment_a adapter"):
        view.get_service()
    assert PaymentWebhookView(service=opened.payment).get_service() is opened.payment


def test_webhook_secret_values_in_fixtures_differ():
    assert len(set(WEBHOOK_SECRETS.values())) == 2


def test_view_bounds_the_bytes_read_when_content_length_is_absent(make_payment):
    from django.test import RequestFactory

    opened = make_payment("payment_a")
    view = StripePaymentWebhookView.as_view(service=opened.payment)
    request = RequestFactory().post(
        "/hooks/payment", b"x" * (2 * 1024 * 1024), content_type="application/json"
    )
    del request.META["CONTENT_LENGTH"]
    response = view(request)
    assert response.status_code == 413
    # At most max_webhook_bytes + 1 bytes were taken from the stream.
    assert len(request._stream.read()) == 2 * 1024 * 1024 - (1024 * 1024 + 1)


def test_the_neutral_view_names_are_the_provider_views():
    """URL configurations written with the spec's names keep routing to the same views."""
    from toolkit_batteries.payment.views import PaymentAWebhookView, PaymentBWebhookView

    assert PaymentAWebhookView is StripePaymentWebhookView
    assert PaymentBWebhookView is PaddlePaymentWebhookView
    assert (StripePaymentWebhookView.adapter, PaddlePaymentWebhookView.adapter) == (
        "payment_a",
        "payment_b",
    )
