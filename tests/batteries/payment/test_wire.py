"""What each provider adapter puts on the wire, as the local provider server saw it."""

from __future__ import annotations

import pytest

from toolkit_batteries.payment import (
    PaymentNotSupportedError,
    PaymentProviderError,
    PaymentState,
)

from .conftest import KEYS

# ------------------------------------------------------------------ payment_a


def test_a_create_posts_a_form_with_bearer_key(make_payment):
    opened = make_payment("payment_a")
    record = opened.payment.create(
        1999, "EUR", description="Order 17", metadata={"cart": "7"}, capture=False
    )
    (seen,) = opened.server.requests("POST", "/v1/payment_intents")
    assert seen.header("Authorization") == f"Bearer {KEYS['payment_a']}"
    assert seen.header("Content-Type") == "application/x-www-form-urlencoded"
    assert seen.header("Stripe-Version")  # the SDK pins its API version
    form = seen.form()
    assert form["amount"] == "1999" and form["currency"] == "eur"
    assert form["capture_method"] == "manual" and form["description"] == "Order 17"
    assert form["metadata[cart]"] == "7"
    assert form["metadata[toolkit_payment_id]"] == str(record.id)
    assert seen.header("Idempotency-Key")  # the SDK adds one to every POST
    assert record.client_secret.startswith(record.provider_id + "_secret_")
    assert record.provider_id.startswith("pi_")


def test_a_keyed_create_sends_a_derived_idempotency_key(make_payment):
    opened = make_payment("payment_a")
    opened.payment.create(700, "usd", idempotency_key="cart-9")
    (seen,) = opened.server.requests("POST", "/v1/payment_intents")
    key = seen.header("Idempotency-Key")
    assert key.startswith("toolkit-create-") and "cart-9" not in key


def test_a_refund_capture_cancel_paths_and_bodies(make_payment):
    opened = make_payment("payment_a")
    held = opened.payment.create(5000, "usd", capture=False)
    held = opened.deliver(held, "authorized")
    assert held.state == PaymentState.AUTHORIZED
    captured = opened.payment.capture(held.id, 4000)
    assert captured.state == PaymentState.SUCCEEDED and captured.amount == 4000
    (cap,) = opened.server.requests("POST", f"/v1/payment_intents/{held.provider_id}/capture")
    assert cap.form() == {"amount_to_capture": "4000"}

    refund = opened.payment.refund(held.id, 1500, idempotency_key="r-1", reason="duplicate")
    (sent,) = opened.server.requests("POST", "/v1/refunds")
    assert sent.form() == {
        "payment_intent": held.provider_id,
        "amount": "1500",
        "reason": "duplicate",
    }
    assert sent.header("Idempotency-Key").startswith("toolkit-refund-")
    assert refund.provider_id.startswith("re_") and refund.status == "succeeded"

    other = opened.payment.create(800, "usd")
    opened.payment.cancel(other.id)
    assert opened.server.requests("POST", f"/v1/payment_intents/{other.provider_id}/cancel")

    opened.server.intents[other.provider_id]["status"] = "canceled"
    assert opened.payment.sync(other.id).state == PaymentState.CANCELED
    assert opened.server.requests("GET", f"/v1/payment_intents/{other.provider_id}")


def test_a_error_body_becomes_a_provider_error_without_secrets(make_payment):
    opened = make_payment("payment_a")
    with pytest.raises(PaymentProviderError) as caught:
        opened.payment.create(10, "usd")  # the provider's minimum is 50
    error = caught.value
    assert error.status == 400 and error.provider_code == "amount_too_small"
    assert error.code == "failed_precondition"
    assert "Amount must be at least" in error.provider_message
    assert "Amount must" not in str(error) and KEYS["payment_a"] not in str(error)
    assert opened.payment.find("anything") is None


def test_a_wrong_key_is_refused_by_the_provider(make_payment):
    from .servers import ProviderA

    server = ProviderA("sk_test_someoneElsesKey").start()
    try:
        opened = make_payment("payment_a", server=server)
        with pytest.raises(PaymentProviderError) as caught:
            opened.payment.create(1000, "usd")
        assert caught.value.status == 401 and caught.value.code == "unavailable"
        assert KEYS["payment_a"] not in str(caught.value)
    finally:
        server.stop()


# ------------------------------------------------------------------ payment_b


def test_b_create_posts_json_with_bearer_and_version(make_payment):
    opened = make_payment("payment_b")
    record = opened.payment.create(1999, "eur", description="Order 17", metadata={"cart": "7"})
    (seen,) = opened.server.requests("POST", "/transactions")
    assert seen.header("Authorization") == f"Bearer {KEYS['payment_b']}"
    assert seen.header("Paddle-Version") == "1"
    assert seen.header("Content-Type") == "application/json"
    assert seen.header("X-Transaction-ID")
    body = seen.json()
    assert body["currency_code"] == "EUR" and body["collection_mode"] == "automatic"
    (item,) = body["items"]
    assert item["quantity"] == 1
    assert item["price"]["unit_price"] == {"amount": "1999", "currency_code": "EUR"}
    assert item["price"]["product"]["tax_category"] == "standard"
    assert body["custom_data"] == {"cart": "7", "toolkit_payment_id": str(record.id)}
    assert record.provider_id.startswith("txn_") and record.state == PaymentState.PENDING
    assert record.checkout_url.endswith(f"_ptxn={record.provider_id}")
    assert record.provider_data["line_item_id"].startswith("txnitm_")


def test_b_refunds_are_adjustments_full_then_partial(make_payment):
    opened = make_payment("payment_b")
    whole = opened.pay(opened.payment.create(1000, "usd"))
    refund = opened.payment.refund(whole.id, idempotency_key="full", reason="customer asked")
    (sent,) = opened.server.requests("POST", "/adjustments")
    assert sent.json() == {
        "action": "refund",
        "transaction_id": whole.provider_id,
        "reason": "customer asked",
        "type": "full",
    }
    assert refund.status == "pending" and refund.provider_id.startswith("adj_")

    part = opened.pay(opened.payment.create(3000, "usd"))
    opened.payment.refund(part.id, 500, idempotency_key="part")
    body = opened.server.requests("POST", "/adjustments")[-1].json()
    assert body["type"] == "partial"
    assert body["items"] == [
        {"item_id": part.provider_data["line_item_id"], "type": "partial", "amount": "500"}
    ]


def test_b_cancel_is_a_patch_and_sync_reads_the_transaction(make_payment):
    opened = make_payment("payment_b")
    record = opened.payment.create(1000, "usd")
    assert opened.payment.cancel(record.id).state == PaymentState.CANCELED
    (sent,) = opened.server.requests("PATCH", f"/transactions/{record.provider_id}")
    assert sent.json() == {"status": "canceled"}
    other = opened.payment.create(1000, "usd")
    opened.server.transactions[other.provider_id]["status"] = "completed"
    assert opened.payment.sync(other.id).state == PaymentState.SUCCEEDED


def test_b_has_no_separate_capture(make_payment):
    opened = make_payment("payment_b")
    with pytest.raises(PaymentNotSupportedError):
        opened.payment.create(1000, "usd", capture=False)
    record = opened.payment.create(1000, "usd")
    with pytest.raises(PaymentNotSupportedError):
        opened.payment.capture(record.id)
    assert len(opened.server.seen) == 1


def test_b_error_body_becomes_a_provider_error(make_payment):
    opened = make_payment("payment_b")
    record = opened.payment.create(1000, "usd")
    opened.server.transactions[record.provider_id]["status"] = "completed"
    opened.payment.sync(record.id)
    opened.server.transactions[record.provider_id]["status"] = "billed"  # not refundable there
    with pytest.raises(PaymentProviderError) as caught:
        opened.payment.refund(record.id, idempotency_key="x")
    error = caught.value
    assert error.status == 400
    assert error.provider_code == "adjustment_transaction_invalid_status_for_refund"
    assert KEYS["payment_b"] not in str(error)
    # Nothing was recorded and the key was released: the retry reaches the provider again.
    assert opened.payment.refunds(record.id) == []
    opened.server.transactions[record.provider_id]["status"] = "completed"
    assert opened.payment.refund(record.id, idempotency_key="x").amount == 1000
    assert len(opened.server.requests("POST", "/adjustments")) == 2


def test_sandbox_selects_the_sandbox_host_and_guards_live_keys(sqlite_dsn):
    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container
    from toolkit_batteries.core.errors import InvalidOptionsError

    config = Config.load(
        {
            "payment": {
                "adapter": "payment_a",
                "options": {"secret_key": "sk_live_abc123", "sandbox": True},
            }
        },
        {},
    )
    container = Container(config)
    try:
        with pytest.raises(InvalidOptionsError, match="live key") as caught:
            container.payment()
        assert "sk_live_abc123" not in str(caught.value)
    finally:
        container.close()
    db = {"adapter": "sqlfile", "options": {"dsn": sqlite_dsn}}
    for sandbox, host in (
        (True, "https://sandbox-api.paddle.com"),
        (False, "https://api.paddle.com"),
    ):
        block = {"adapter": "payment_b", "options": {"api_key": "k", "sandbox": sandbox}}
        container = Container(Config.load({"db": db, "payment": block}, {}))
        try:
            assert container.payment()._client.options.environment.base_url == host
        finally:
            container.close()


def test_provider_calls_run_inside_payment_spans(make_payment):
    from contextlib import contextmanager

    from toolkit_batteries.core import tracing

    seen: list[tuple[str, str, str]] = []

    class Recorder:
        @contextmanager
        def operation(self, service, instance, op, **attributes):
            seen.append((service, instance, op))
            yield None

    for variant, expected in (("payment_a", "create"), ("payment_b", "create")):
        opened = make_payment(variant)
        tracing.activate(Recorder())
        try:
            record = opened.payment.create(1000, "usd")
            opened.payment.cancel(record.id)
        finally:
            tracing.reset()
        assert ("payment", "default", expected) in seen
        assert ("payment", "default", "cancel") in seen
        seen.clear()
