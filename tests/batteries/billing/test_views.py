"""The DRF webhook views: CSRF-exempt, 400 on a bad signature, 413 before parsing an
oversized body, 404 on the other provider's view, 200 with the outcome otherwise."""

from __future__ import annotations

import logging
import time

import pytest
from rest_framework.test import APIRequestFactory

from toolkit_batteries.billing import SubscriptionStatus
from toolkit_batteries.billing.views import PaddleBillingWebhookView, StripeBillingWebhookView

from .webhooks import sign, subscription_event

VIEWS = {"billing_a": StripeBillingWebhookView, "billing_b": PaddleBillingWebhookView}


def post(view_cls, billing, body: bytes, headers: dict[str, str]):
    factory = APIRequestFactory(enforce_csrf_checks=True)
    meta = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
    request = factory.post("/hooks/billing", data=body, content_type="application/json", **meta)
    response = view_cls.as_view(get_billing=lambda: billing)(request)
    response.render()
    return response


@pytest.mark.parametrize("variant", ["billing_a", "billing_b"])
def test_a_signed_event_is_applied(make_billing, variant):
    opened = make_billing(variant)
    sub = opened.live_subscription()
    now = int(time.time())
    body = subscription_event(variant, sub.id, sub.customer_id, "past_due", now)
    response = post(VIEWS[variant], opened.billing, body, sign(variant, body, now))
    assert response.status_code == 200
    assert response.data == {"received": True, "outcome": "applied"}
    assert opened.billing.recorded(sub.id).status is SubscriptionStatus.PAST_DUE
    again = post(VIEWS[variant], opened.billing, body, sign(variant, body, now))
    assert again.status_code == 200 and again.data["outcome"] == "duplicate"


@pytest.mark.parametrize("variant", ["billing_a", "billing_b"])
def test_a_bad_signature_is_400(make_billing, variant, caplog):
    caplog.set_level(logging.INFO, logger="toolkit.billing")
    opened = make_billing(variant)
    sub = opened.live_subscription()
    now = int(time.time())
    body = subscription_event(variant, sub.id, sub.customer_id, "canceled", now)
    response = post(VIEWS[variant], opened.billing, body, sign(variant, body, now, "whsec_x"))
    assert response.status_code == 400
    assert response.data["error"]["code"] == "invalid_argument"
    assert opened.billing.recorded(sub.id).status is SubscriptionStatus.ACTIVE
    assert any("webhook refused" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("variant", ["billing_a", "billing_b"])
def test_an_oversized_body_is_413_before_parsing(make_billing, variant):
    opened = make_billing(variant, max_webhook_bytes="1KiB")
    assert opened.billing.max_webhook_bytes == 1024
    body = b"{" + b" " * 2048 + b"}"
    response = post(VIEWS[variant], opened.billing, body, sign(variant, body, int(time.time())))
    assert response.status_code == 413
    assert response.data["error"]["code"] == "payload_too_large"
    exactly = b'{"id": "evt_small", "type": "x", "event_type": "x"}'.ljust(1024, b" ")
    ok = post(VIEWS[variant], opened.billing, exactly, sign(variant, exactly, int(time.time())))
    assert ok.status_code == 200 and ok.data["outcome"] == "ignored"


def test_the_other_providers_view_is_404(make_billing):
    opened = make_billing("billing_a")
    body = b"{}"
    response = post(PaddleBillingWebhookView, opened.billing, body, sign("billing_b", body, 1))
    assert response.status_code == 404


def test_the_stub_accepts_no_webhook(make_billing):
    opened = make_billing("stub")
    response = post(StripeBillingWebhookView, opened.billing, b"{}", {})
    assert response.status_code == 404


def test_the_neutral_view_names_are_the_provider_views(make_billing):
    """URL configurations written with the spec's names keep routing to the same views."""
    from toolkit_batteries.billing.views import BillingAWebhookView, BillingBWebhookView

    assert BillingAWebhookView is StripeBillingWebhookView
    assert BillingBWebhookView is PaddleBillingWebhookView
    opened = make_billing("billing_a")
    sub = opened.live_subscription()
    now = int(time.time())
    body = subscription_event("billing_a", sub.id, sub.customer_id, "past_due", now)
    response = post(BillingAWebhookView, opened.billing, body, sign("billing_a", body, now))
    assert response.status_code == 200 and response.data["outcome"] == "applied"
