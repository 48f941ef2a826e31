"""One contract, run on every billing adapter (``stub``, ``billing_a``, ``billing_b``)."""

from __future__ import annotations

import threading

import pytest

from toolkit_batteries.billing import (
    Billing,
    Customer,
    IdempotencyMismatchError,
    IllegalTransitionError,
    Invoice,
    Subscription,
    SubscriptionNotFoundError,
    SubscriptionStatus,
    WebhookSignatureError,
    WebhookTooLargeError,
)
from toolkit_batteries.billing.base import with_status
from toolkit_batteries.billing.models import BillingSubscription


class TestBillingContract:
    def test_opens_as_the_configured_adapter(self, opened):
        assert isinstance(opened.billing, Billing)
        assert opened.billing.adapter_name == opened.variant
        assert opened.billing.holds_funds is (opened.variant != "stub")

    def test_create_customer(self, opened):
        customer = opened.billing.create_customer("ada@example.com", name="Ada")
        assert isinstance(customer, Customer)
        assert customer.id and customer.email == "ada@example.com" and customer.name == "Ada"

    def test_create_subscription_is_recorded(self, opened):
        customer = opened.billing.create_customer("bob@example.com")
        sub = opened.billing.create_subscription(customer.id, "price_basic")
        assert isinstance(sub, Subscription) and sub.customer_id == customer.id
        assert sub.status in (SubscriptionStatus.ACTIVE, SubscriptionStatus.INCOMPLETE)
        row = BillingSubscription.objects.using(opened.billing.database.alias).get(
            instance="default", provider_id=sub.id
        )
        assert row.status == sub.status.value and row.adapter == opened.variant
        assert row.customer_id == customer.id
        assert opened.billing.recorded(sub.id).status is sub.status

    def test_an_idempotency_key_reaches_the_provider_once(self, opened):
        customer = opened.billing.create_customer("cy@example.com")
        first = opened.billing.create_subscription(
            customer.id, "price_basic", idempotency_key="signup-42"
        )
        again = opened.billing.create_subscription(
            customer.id, "price_basic", idempotency_key="signup-42"
        )
        assert again == first
        assert opened.provider_creates() == 1
        other = opened.billing.create_subscription(customer.id, "price_basic")
        assert other.id != first.id and opened.provider_creates() == 2

    def test_a_key_reused_with_other_arguments_is_refused(self, opened):
        customer = opened.billing.create_customer("di@example.com")
        opened.billing.create_subscription(customer.id, "price_basic", idempotency_key="k1")
        with pytest.raises(IdempotencyMismatchError) as info:
            opened.billing.create_subscription(customer.id, "price_pro", idempotency_key="k1")
        assert "k1" not in str(info.value)
        assert opened.provider_creates() == 1

    def test_concurrent_calls_with_one_key_reach_the_provider_once(self, opened):
        customer = opened.billing.create_customer("ed@example.com")
        results, errors = [], []

        def call() -> None:
            try:
                results.append(
                    opened.billing.create_customer("ed@example.com", idempotency_key="dup")
                )
            except Exception as exc:  # the loser may see the key in progress
                errors.append(type(exc).__name__)

        threads = [threading.Thread(target=call) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert len({c.id for c in results}) == 1 and customer.id not in {c.id for c in results}
        assert set(errors) <= {"IdempotencyConflictError"}

    def test_cancel_then_the_state_machine_refuses_revival(self, opened):
        sub = opened.live_subscription()
        assert sub.status is SubscriptionStatus.ACTIVE
        canceled = opened.billing.cancel_subscription(sub.id, idempotency_key=f"cancel-{sub.id}")
        assert canceled.status is SubscriptionStatus.CANCELED
        assert opened.billing.recorded(sub.id).status is SubscriptionStatus.CANCELED
        with pytest.raises(IllegalTransitionError) as info:
            opened.billing.record(with_status(canceled, SubscriptionStatus.ACTIVE))
        assert "canceled" in str(info.value) and "active" in str(info.value)
        assert opened.billing.recorded(sub.id).status is SubscriptionStatus.CANCELED
        # the same cancel, retried with its key, is answered from the idempotency store
        assert opened.billing.cancel_subscription(sub.id, idempotency_key=f"cancel-{sub.id}") == (
            canceled
        )

    def test_cancel_at_period_end_keeps_the_status(self, opened):
        sub = opened.live_subscription()
        later = opened.billing.cancel_subscription(sub.id, at_period_end=True)
        assert later.status is SubscriptionStatus.ACTIVE and later.cancel_at_period_end
        assert opened.billing.recorded(sub.id).cancel_at_period_end is True

    def test_unknown_subscription(self, opened):
        with pytest.raises(SubscriptionNotFoundError):
            opened.billing.get_subscription("sub_missing")
        with pytest.raises(SubscriptionNotFoundError):
            opened.billing.cancel_subscription("sub_missing")

    def test_invoices_of_a_customer(self, opened):
        customer = opened.billing.create_customer("fay@example.com")
        opened.billing.create_subscription(customer.id, "price_basic")
        invoices = opened.billing.list_invoices(customer.id, limit=5)
        assert invoices and all(isinstance(i, Invoice) for i in invoices)
        assert {i.customer_id for i in invoices} == {customer.id}
        with pytest.raises(ValueError):
            opened.billing.list_invoices(customer.id, limit=0)

    def test_checkout_and_portal_urls(self, opened):
        customer = opened.billing.create_customer("gus@example.com")
        checkout = opened.billing.checkout_url(
            customer.id, "price_basic", success_url="https://app.example.com/ok"
        )
        portal = opened.billing.portal_url(customer.id, return_url="https://app.example.com/")
        assert checkout.startswith("https://") and portal.startswith("https://")

    def test_bad_arguments_are_refused_before_any_call(self, opened):
        for bad in ("", "   "):
            with pytest.raises(ValueError):
                opened.billing.create_customer(bad)
            with pytest.raises(ValueError):
                opened.billing.create_subscription(bad, "price_basic")
        assert opened.provider_creates() == 0

    def test_an_oversized_webhook_is_refused_before_parsing(self, opened):
        limit = opened.billing.max_webhook_bytes
        assert limit == 1 << 20
        with pytest.raises(WebhookTooLargeError):
            opened.billing.handle_webhook(b"\xff" * (limit + 1), {})

    def test_an_unsigned_webhook_is_refused(self, opened):
        with pytest.raises(WebhookSignatureError):
            opened.billing.handle_webhook(b'{"id": "evt_1", "type": "x"}', {})

    def test_a_replayed_create_does_not_fight_a_later_cancel(self, opened):
        customer = opened.billing.create_customer("hal@example.com")
        sub = opened.billing.create_subscription(customer.id, "price_basic", idempotency_key="s")
        opened.billing.record(with_status(sub, SubscriptionStatus.CANCELED))  # as a webhook
        replayed = opened.billing.create_subscription(
            customer.id, "price_basic", idempotency_key="s"
        )
        assert replayed == sub  # the stored answer, not recorded again
        assert opened.billing.recorded(sub.id).status is SubscriptionStatus.CANCELED
