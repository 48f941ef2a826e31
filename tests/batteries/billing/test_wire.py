"""What each provider adapter puts on the wire: path, auth header, body (asserted by the
local fake that received it), and how provider errors come back."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from toolkit_batteries.billing import ProviderError, SubscriptionStatus

from .fakes import PADDLE_KEY, STRIPE_KEY


def test_billing_a_customer_and_subscription_requests(make_billing):
    opened = make_billing("billing_a")
    customer = opened.billing.create_customer(
        "ada@example.com", name="Ada", idempotency_key="cust-1"
    )
    sub = opened.billing.create_subscription(
        customer.id, "price_basic", trial_days=14, idempotency_key="sub-1"
    )
    [made] = opened.fake.requests_to("POST", "/v1/customers")
    assert made.headers["authorization"] == f"Bearer {STRIPE_KEY}"
    assert made.headers["content-type"].startswith("application/x-www-form-urlencoded")
    assert made.headers["idempotency-key"] == "cust-1"
    assert made.headers["stripe-version"]
    assert made.body == {"email": "ada@example.com", "name": "Ada"}
    [subscribed] = opened.fake.requests_to("POST", "/v1/subscriptions")
    assert subscribed.headers["idempotency-key"] == "sub-1"
    assert subscribed.body == {
        "customer": customer.id,
        "items[0][price]": "price_basic",
        "trial_period_days": "14",
    }
    assert sub.status is SubscriptionStatus.TRIALING and sub.price_id == "price_basic"
    assert sub.current_period_end and sub.current_period_end > 0


def test_billing_a_cancel_invoices_and_sessions(make_billing):
    opened = make_billing("billing_a")
    sub = opened.live_subscription()
    opened.billing.cancel_subscription(sub.id, at_period_end=True)
    [update] = opened.fake.requests_to("POST", f"/v1/subscriptions/{sub.id}")
    assert update.body == {"cancel_at_period_end": "true"}
    opened.billing.cancel_subscription(sub.id)
    assert len(opened.fake.requests_to("DELETE", f"/v1/subscriptions/{sub.id}")) == 1
    opened.billing.list_invoices(sub.customer_id, limit=3)
    [listed] = opened.fake.requests_to("GET", "/v1/invoices")
    assert listed.query == {"customer": [sub.customer_id], "limit": ["3"]}
    url = opened.billing.checkout_url(
        sub.customer_id,
        "price_pro",
        success_url="https://app.example.com/ok",
        cancel_url="https://app.example.com/no",
    )
    [checkout] = opened.fake.requests_to("POST", "/v1/checkout/sessions")
    assert checkout.body == {
        "mode": "subscription",
        "customer": sub.customer_id,
        "line_items[0][price]": "price_pro",
        "line_items[0][quantity]": "1",
        "success_url": "https://app.example.com/ok",
        "cancel_url": "https://app.example.com/no",
    }
    assert url.startswith("https://checkout.stripe.com/c/pay/cs_test_")
    opened.billing.portal_url(sub.customer_id, return_url="https://app.example.com/")
    [portal] = opened.fake.requests_to("POST", "/v1/billing_portal/sessions")
    assert portal.body == {"customer": sub.customer_id, "return_url": "https://app.example.com/"}


def test_billing_a_provider_errors_name_the_operation_not_the_answer(make_billing):
    opened = make_billing("billing_a")
    with pytest.raises(ProviderError) as info:
        opened.billing.create_subscription("cus_nobody", "price_basic")
    assert info.value.status == 400 and info.value.code == "failed_precondition"
    assert "create_subscription" in str(info.value) and "No such customer" not in str(info.value)
    wrong = make_billing("billing_a", secret_key="sk_test_wrong")
    with pytest.raises(ProviderError) as info:
        wrong.billing.create_customer("ada@example.com")
    assert info.value.status == 401 and "sk_test_wrong" not in str(info.value)


def test_billing_b_customer_transaction_and_subscription_requests(make_billing):
    opened = make_billing("billing_b")
    customer = opened.billing.create_customer("ada@example.com", name="Ada")
    [made] = opened.fake.requests_to("POST", "/customers")
    assert made.headers["authorization"] == f"Bearer {PADDLE_KEY}"
    assert made.headers["paddle-version"] == "1"
    assert made.headers["content-type"] == "application/json"
    assert json.loads(made.raw) == {"email": "ada@example.com", "name": "Ada"}
    sub = opened.billing.create_subscription(customer.id, "pri_basic")
    [txn] = opened.fake.requests_to("POST", "/transactions")
    assert txn.body == {
        "items": [{"price_id": "pri_basic", "quantity": 1}],
        "customer_id": customer.id,
    }
    assert sub.status is SubscriptionStatus.INCOMPLETE and sub.id.startswith("txn_")
    assert sub.reference == sub.id and sub.checkout_url.endswith(sub.id)
    with pytest.raises(ValueError):
        opened.billing.create_subscription(customer.id, "pri_basic", trial_days=7)


def test_billing_b_cancel_invoices_and_portal(make_billing):
    opened = make_billing("billing_b")
    sub = opened.live_subscription()
    [fetched] = opened.fake.requests_to("GET", f"/subscriptions/{sub.id}")
    assert fetched.headers["authorization"] == f"Bearer {PADDLE_KEY}"
    assert (
        sub.current_period_end == datetime(2026, 12, 1, tzinfo=UTC).timestamp()
        and sub.price_id == "pri_basic"
    )
    later = opened.billing.cancel_subscription(sub.id, at_period_end=True)
    assert later.cancel_at_period_end and later.status is SubscriptionStatus.ACTIVE
    now = opened.billing.cancel_subscription(sub.id)
    assert now.status is SubscriptionStatus.CANCELED
    bodies = [s.body for s in opened.fake.requests_to("POST", f"/subscriptions/{sub.id}/cancel")]
    assert bodies == [{"effective_from": "next_billing_period"}, {"effective_from": "immediately"}]
    opened.billing.create_subscription(sub.customer_id, "pri_basic")
    invoices = opened.billing.list_invoices(sub.customer_id, limit=4)
    [listed] = opened.fake.requests_to("GET", "/transactions")
    assert listed.query == {
        "customer_id": [sub.customer_id],
        "per_page": ["4"],
        "order_by": ["created_at[DESC]"],
    }
    assert invoices[0].amount_due == 1500 and invoices[0].currency == "USD"
    url = opened.billing.portal_url(sub.customer_id)
    assert len(opened.fake.requests_to("POST", f"/customers/{sub.customer_id}/portal-sessions"))
    assert url.startswith("https://customer-portal.paddle.com/")


def test_billing_b_provider_errors(make_billing):
    wrong = make_billing("billing_b", api_key="pdl_wrong_key")
    with pytest.raises(ProviderError) as info:
        wrong.billing.create_customer("ada@example.com")
    assert info.value.status == 403 and "forbidden" in str(info.value)
    assert "pdl_wrong_key" not in str(info.value)


def test_an_id_cannot_reach_another_path(make_billing):
    opened = make_billing("billing_b")
    with pytest.raises(Exception):  # noqa: B017 - whatever the provider says, the path is one segment
        opened.billing.get_subscription("../customers")
    assert opened.fake.requests_to("GET", "/subscriptions/..%2Fcustomers")
    assert not opened.fake.requests_to("GET", "/customers")


@pytest.mark.parametrize(
    ("variant", "path"), [("billing_a", "/v1/balance"), ("billing_b", "/event-types")]
)
def test_ping_is_one_authenticated_call(make_billing, variant, path):
    opened = make_billing(variant)
    opened.billing.ping()
    [seen] = opened.fake.requests_to("GET", path)
    assert seen.headers["authorization"] == f"Bearer {opened.fake.key}"
    field = "secret_key" if variant == "billing_a" else "api_key"
    with pytest.raises(ProviderError):
        make_billing(variant, **{field: "wrong"}).billing.ping()
