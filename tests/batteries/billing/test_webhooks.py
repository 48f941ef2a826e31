"""Webhook signatures, timestamp tolerance and the state machine, on both providers,
with signatures computed independently (``webhooks.py``) and an injected clock."""

from __future__ import annotations

import time

import pytest

from toolkit_batteries.billing import SubscriptionStatus, WebhookSignatureError
from toolkit_batteries.billing.base import with_status

from .webhooks import hex_hmac, other_event, sign, subscription_event

PROVIDERS = ("billing_a", "billing_b")


@pytest.fixture(params=PROVIDERS)
def provider(request, make_billing):
    opened = make_billing(request.param)
    now = int(time.time())
    opened.billing.clock = lambda: float(now)
    opened.now = now
    return opened


def deliver(opened, body: bytes, ts: int | None = None, **kwargs):
    headers = sign(opened.variant, body, opened.now if ts is None else ts, **kwargs)
    return opened.billing.handle_webhook(body, headers)


def event(opened, sub, status: str, created: int, **kwargs) -> bytes:
    return subscription_event(opened.variant, sub.id, sub.customer_id, status, created, **kwargs)


def test_a_signed_event_moves_the_subscription(provider):
    sub = provider.live_subscription()
    applied = deliver(provider, event(provider, sub, "past_due", provider.now))
    assert (applied.outcome, applied.subscription_id, applied.status) == (
        "applied",
        sub.id,
        "past_due",
    )
    assert provider.billing.recorded(sub.id).status is SubscriptionStatus.PAST_DUE


def test_a_replayed_event_is_applied_once(provider):
    sub = provider.live_subscription()
    body = event(provider, sub, "past_due", provider.now, event_id="evt_same")
    assert deliver(provider, body).outcome == "applied"
    provider.billing.record(with_status(sub, SubscriptionStatus.ACTIVE))
    assert deliver(provider, body).outcome == "duplicate"
    assert provider.billing.recorded(sub.id).status is SubscriptionStatus.ACTIVE


def test_an_older_event_does_not_overwrite_a_newer_one(provider):
    sub = provider.live_subscription()
    assert deliver(provider, event(provider, sub, "past_due", provider.now)).outcome == "applied"
    older = event(provider, sub, "active", provider.now - 60)
    assert deliver(provider, older).outcome == "stale"
    assert provider.billing.recorded(sub.id).status is SubscriptionStatus.PAST_DUE


def test_an_illegal_transition_is_acknowledged_and_not_applied(provider, caplog):
    sub = provider.live_subscription()
    provider.billing.cancel_subscription(sub.id)
    applied = deliver(provider, event(provider, sub, "active", provider.now + 1))
    assert applied.outcome == "illegal"
    assert provider.billing.recorded(sub.id).status is SubscriptionStatus.CANCELED
    assert any("refused by the state machine" in r.getMessage() for r in caplog.records)


def test_other_events_are_ignored(provider):
    assert deliver(provider, other_event(provider.variant, provider.now)).outcome == "ignored"


@pytest.mark.parametrize("offset", [-299, 0, 299])
def test_timestamps_within_the_tolerance_pass(provider, offset):
    sub = provider.live_subscription()
    body = event(provider, sub, "past_due", provider.now)
    assert deliver(provider, body, ts=provider.now + offset).outcome == "applied"


@pytest.mark.parametrize("offset", [-301, 301, -86400])
def test_timestamps_outside_the_tolerance_are_refused(provider, offset):
    sub = provider.live_subscription()
    body = event(provider, sub, "past_due", provider.now)
    with pytest.raises(WebhookSignatureError) as info:
        deliver(provider, body, ts=provider.now + offset)
    assert "tolerance" in str(info.value)
    assert provider.billing.recorded(sub.id).status is SubscriptionStatus.ACTIVE


def test_a_wrong_secret_a_tampered_body_and_no_header_are_refused(provider):
    sub = provider.live_subscription()
    body = event(provider, sub, "canceled", provider.now)
    with pytest.raises(WebhookSignatureError):
        deliver(provider, body, secret="whsec_not_the_secret")
    headers = sign(provider.variant, body, provider.now)
    tampered = body.replace(b'"canceled"', b'"active"  ')
    with pytest.raises(WebhookSignatureError):
        provider.billing.handle_webhook(tampered, headers)
    with pytest.raises(WebhookSignatureError):
        provider.billing.handle_webhook(body, {})
    for garbage in ("t=abc", "nonsense", "ts=1;h1=", "=;=", "v1=00"):
        name = next(iter(headers))
        with pytest.raises(WebhookSignatureError):
            provider.billing.handle_webhook(body, {name: garbage})
    assert provider.billing.recorded(sub.id).status is SubscriptionStatus.ACTIVE


def test_headers_are_matched_case_insensitively(provider):
    sub = provider.live_subscription()
    body = event(provider, sub, "past_due", provider.now)
    [(name, value)] = sign(provider.variant, body, provider.now).items()
    assert provider.billing.handle_webhook(body, {name.lower(): value}).outcome == "applied"


def test_without_a_webhook_secret_every_webhook_is_refused(make_billing):
    for variant in PROVIDERS:
        opened = make_billing(variant, webhook_secret="")
        body = other_event(variant, int(time.time()))
        with pytest.raises(WebhookSignatureError) as info:
            opened.billing.handle_webhook(body, sign(variant, body, int(time.time())))
        assert "webhook_secret" in str(info.value)


def test_billing_a_accepts_any_matching_v1_for_secret_rotation(make_billing):
    opened = make_billing("billing_a")
    now = int(time.time())
    body = other_event("billing_a", now)
    good = hex_hmac("whsec_billingTestSecret0123456789abcdef", f"{now}.{body.decode()}")
    header = f"t={now},v1={'0' * 64},v1={good}"
    assert opened.billing.handle_webhook(body, {"Stripe-Signature": header}).outcome == "ignored"


def test_billing_b_subscription_created_rekeys_the_checkout_row(make_billing):
    opened = make_billing("billing_b")
    now = int(time.time())
    opened.billing.clock = lambda: float(now)
    customer = opened.billing.create_customer("ada@example.com")
    pending = opened.billing.create_subscription(customer.id, "pri_basic")
    assert opened.billing.recorded(pending.id).status is SubscriptionStatus.INCOMPLETE
    body = subscription_event(
        "billing_b",
        "sub_01realsubscription",
        customer.id,
        "active",
        now,
        kind="created",
        transaction_id=pending.id,
    )
    assert opened.billing.handle_webhook(body, sign("billing_b", body, now)).outcome == "applied"
    assert opened.billing.recorded(pending.id) is None
    row = opened.billing.recorded("sub_01realsubscription")
    assert row.status is SubscriptionStatus.ACTIVE and row.reference == pending.id


def test_concurrent_deliveries_keep_the_newest_status_on_postgres(make_billing):
    """Eight deliveries for one subscription at once, in shuffled order, on PostgreSQL:
    the row lock serialises them and the newest event's status wins."""
    import random
    import threading

    from django.db import connections

    opened = make_billing("billing_a")  # rows in PostgreSQL
    now = int(time.time())
    opened.billing.clock = lambda: float(now)
    sub = opened.live_subscription()
    statuses = ["past_due", "active"] * 4
    bodies = [
        subscription_event("billing_a", sub.id, sub.customer_id, status, now - 100 + i)
        for i, status in enumerate(statuses)
    ]
    order = list(range(len(bodies)))
    random.Random(7).shuffle(order)
    outcomes: list[str] = []
    errors: list[BaseException] = []
    start = threading.Barrier(len(order))

    def deliver_one(i: int) -> None:
        try:
            start.wait(10)
            body = bodies[i]
            outcomes.append(
                opened.billing.handle_webhook(body, sign("billing_a", body, now)).outcome
            )
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=deliver_one, args=(i,)) for i in order]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == [] and len(outcomes) == len(bodies)
    assert set(outcomes) <= {"applied", "stale"} and "applied" in outcomes
    row = opened.billing._row(sub.id)
    assert row.status == statuses[-1] and row.last_event_at == now - 100 + len(bodies) - 1
