"""``billing_a`` (Stripe Billing) against localstripe, a stateful Stripe emulator.

localstripe emulates customers, legacy Plans, subscriptions, invoices it bills at once,
cancellation and signed webhooks, so all of those are proven here against a server we did
not write. It has no Prices (``items[][price]``, which the adapter sends): creating a
subscription stays proven by the wire tests (``test_wire.py``) only, and the
subscriptions here are made at the provider the way a hosted checkout would make them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolkit_batteries.billing import SubscriptionStatus, WebhookSignatureError

from ...support.localstripe import CARD_OK, LocalStripe, WebhookRecorder
from .conftest import STRIPE_WEBHOOK_SECRET

PLAN = "basic-monthly"


@pytest.fixture(scope="module")
def stripe_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStripe]:
    with LocalStripe(tmp_path_factory.mktemp("localstripe")) as server:
        server.ok(
            "POST",
            "/v1/plans",
            id=PLAN,
            amount=900,
            currency="eur",
            interval="month",
            product={"name": "Basic"},
        )
        yield server


@pytest.fixture(scope="module")
def recorder(stripe_server: LocalStripe) -> Iterator[WebhookRecorder]:
    with WebhookRecorder() as receiving:
        stripe_server.send_webhooks_to(receiving.url, STRIPE_WEBHOOK_SECRET)
        yield receiving


@pytest.fixture
def billing(make_billing, stripe_server):
    return make_billing(
        "billing_a", endpoint=stripe_server.url, secret_key="sk_test_billing42"
    ).billing


def subscribe_at_provider(server: LocalStripe, customer_id: str) -> dict:
    """Subscribe the customer as a hosted checkout would: a card, then the subscription."""
    card = server.ok(
        "POST",
        "/v1/payment_methods",
        type="card",
        card={"number": CARD_OK, "exp_month": 12, "exp_year": 2034, "cvc": "123"},
    )
    server.ok("POST", f"/v1/payment_methods/{card['id']}/attach", customer=customer_id)
    server.ok(
        "POST",
        f"/v1/customers/{customer_id}",
        invoice_settings={"default_payment_method": card["id"]},
    )
    return server.ok("POST", "/v1/subscriptions", customer=customer_id, items={"0": {"plan": PLAN}})


def test_a_customer_is_created_at_the_provider(billing, stripe_server):
    customer = billing.create_customer("ada@example.com", name="Ada")
    held = stripe_server.ok("GET", f"/v1/customers/{customer.id}")
    assert (held["email"], held["name"]) == ("ada@example.com", "Ada")


def test_sync_records_the_providers_subscription(billing, stripe_server):
    customer = billing.create_customer("grace@example.com")
    made = subscribe_at_provider(stripe_server, customer.id)
    subscription = billing.sync_subscription(made["id"])
    assert subscription.status == SubscriptionStatus.ACTIVE
    assert subscription.customer_id == customer.id
    assert billing.recorded(made["id"]).status == SubscriptionStatus.ACTIVE


def test_invoices_are_the_providers(billing, stripe_server):
    customer = billing.create_customer("linus@example.com")
    subscribe_at_provider(stripe_server, customer.id)
    invoices = billing.list_invoices(customer.id)
    assert [(i.status, i.amount_due, i.currency) for i in invoices] == [("paid", 900, "eur")]


def test_cancel_now_cancels_at_the_provider(billing, stripe_server):
    customer = billing.create_customer("edsger@example.com")
    made = subscribe_at_provider(stripe_server, customer.id)
    billing.sync_subscription(made["id"])
    canceled = billing.cancel_subscription(made["id"])
    assert canceled.status == SubscriptionStatus.CANCELED
    assert stripe_server.ok("GET", f"/v1/subscriptions/{made['id']}")["status"] == "canceled"
    assert billing.recorded(made["id"]).status == SubscriptionStatus.CANCELED


def test_cancel_at_period_end_keeps_it_active_with_the_flag(billing, stripe_server):
    customer = billing.create_customer("barbara@example.com")
    made = subscribe_at_provider(stripe_server, customer.id)
    later = billing.cancel_subscription(made["id"], at_period_end=True)
    assert later.status == SubscriptionStatus.ACTIVE and later.cancel_at_period_end
    assert stripe_server.ok("GET", f"/v1/subscriptions/{made['id']}")["cancel_at_period_end"]


def test_subscription_webhooks_signed_by_localstripe_are_applied(billing, stripe_server, recorder):
    customer = billing.create_customer("ken@example.com")
    made = subscribe_at_provider(stripe_server, customer.id)
    body, headers = recorder.event("customer.subscription.created", made["id"])
    applied = billing.handle_webhook(body, headers)
    assert (applied.outcome, applied.subscription_id) == ("applied", made["id"])
    assert billing.recorded(made["id"]).status == SubscriptionStatus.ACTIVE
    assert billing.handle_webhook(body, headers).outcome == "duplicate"


def test_a_localstripe_webhook_under_another_secret_is_refused(
    make_billing, stripe_server, recorder
):
    other = make_billing(
        "billing_a",
        endpoint=stripe_server.url,
        secret_key="sk_test_billing42",
        webhook_secret="whsec_someone_elses_secret",
    ).billing
    customer = other.create_customer("mallory@example.com")
    made = subscribe_at_provider(stripe_server, customer.id)
    body, headers = recorder.event("customer.subscription.created", made["id"])
    with pytest.raises(WebhookSignatureError):
        other.handle_webhook(body, headers)
    assert other.recorded(made["id"]) is None
