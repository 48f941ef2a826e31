"""The payment stand-ins refuse what Stripe and Paddle refuse, and the adapters still pass.

Each malformed request is sent raw (urllib), so the server's refusal is what is tested; the
adapter tests then show the battery's own requests are of the accepted kind, including
Stripe's rule that an ``Idempotency-Key`` is bound to the parameters it was first used with.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest

from toolkit_batteries.payment import PaymentState

from .conftest import KEYS
from .servers import ProviderA, ProviderB

VERSION = "2024-06-20"


def send(
    server: ProviderA | ProviderB,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, dict[str, str]]:
    """Send one raw request; return ``(status, decoded JSON body, headers)``."""
    request = urllib.request.Request(
        server.url + path, data=body, method=method, headers=headers or {}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read()), dict(answer.headers)
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read()), dict(refused.headers)


# ---------------------------------------------------------------------- Stripe


def stripe_headers(**extra: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {KEYS['payment_a']}",
        "Stripe-Version": VERSION,
        "Content-Type": "application/x-www-form-urlencoded",
        **extra,
    }


def form(**fields: Any) -> bytes:
    return urllib.parse.urlencode(fields).encode()


GOOD = form(amount=1000, currency="usd")
INVALID = "invalid_request_error"
ENUM = "parameter_invalid_enum"


@pytest.fixture
def stripe():
    server = ProviderA(KEYS["payment_a"]).start()
    yield server
    server.stop()


@pytest.mark.parametrize(
    ("headers", "body", "status", "kind", "code"),
    [
        ({"Stripe-Version": ""}, GOOD, 400, INVALID, None),
        ({"Stripe-Version": "latest"}, GOOD, 400, INVALID, None),
        ({"Content-Type": "application/json"}, b'{"amount": 1000}', 400, INVALID, None),
        ({"Authorization": f"Basic {KEYS['payment_a']}"}, GOOD, 401, INVALID, None),
        ({"Authorization": "Bearer sk_test_other"}, GOOD, 401, INVALID, None),
        ({}, form(currency="usd"), 400, INVALID, "parameter_missing"),
        ({}, form(amount=1000), 400, INVALID, "parameter_missing"),
        ({}, form(amount="ten", currency="usd"), 400, INVALID, "parameter_invalid_integer"),
        ({}, form(amount=1, currency="usd", colour="red"), 400, INVALID, "parameter_unknown"),
        ({}, form(amount=1, currency="u", capture_method="x"), 400, INVALID, ENUM),
        ({"Idempotency-Key": "k" * 256}, GOOD, 400, INVALID, None),
    ],
    ids=[
        "no-version", "undated-version", "json-body", "basic-auth", "other-key",
        "no-amount", "no-currency", "amount-not-integer", "unknown-param",
        "bad-capture-method", "key-too-long",
    ],
)  # fmt: skip
def test_stripe_refuses_malformed_creates(stripe, headers, body, status, kind, code):
    got, answer, _ = send(stripe, "POST", "/v1/payment_intents", body, stripe_headers(**headers))
    assert got == status
    assert answer["error"]["type"] == kind
    assert answer["error"].get("code") == code
    assert stripe.intents == {}


def test_stripe_refuses_a_refund_naming_no_payment(stripe):
    got, answer, _ = send(stripe, "POST", "/v1/refunds", form(amount=100), stripe_headers())
    assert got == 400 and answer["error"]["code"] == "parameter_missing"
    got, answer, _ = send(
        stripe, "POST", "/v1/refunds", form(payment_intent="pi_1", reason="x"), stripe_headers()
    )
    assert got == 400 and answer["error"]["code"] == "parameter_invalid_enum"


def test_stripe_binds_an_idempotency_key_to_its_first_parameters(stripe):
    headers = stripe_headers(**{"Idempotency-Key": "order-17"})
    first = send(stripe, "POST", "/v1/payment_intents", form(amount=1000, currency="usd"), headers)
    again = send(stripe, "POST", "/v1/payment_intents", form(amount=1000, currency="usd"), headers)
    assert first[0] == again[0] == 200
    assert again[1]["id"] == first[1]["id"] and len(stripe.intents) == 1
    assert again[2].get("Idempotent-Replayed") == "true"
    assert "Idempotent-Replayed" not in first[2]

    other = send(stripe, "POST", "/v1/payment_intents", form(amount=2000, currency="usd"), headers)
    assert other[0] == 400 and other[1]["error"]["type"] == "idempotency_error"
    elsewhere = send(stripe, "POST", "/v1/refunds", form(payment_intent=first[1]["id"]), headers)
    assert elsewhere[0] == 400 and elsewhere[1]["error"]["type"] == "idempotency_error"
    assert len(stripe.intents) == 1


def test_stripe_adapter_requests_pass_and_retries_reuse_key_and_body(make_payment):
    opened = make_payment("payment_a")
    opened.server.failures.append(
        (503, {"error": {"type": "api_error", "message": "busy"}}, {"Stripe-Should-Retry": "true"})
    )
    record = opened.payment.create(1999, "usd", description="Order 17", capture=False)
    first, retry = opened.server.requests("POST", "/v1/payment_intents")
    assert first.header("Idempotency-Key") == retry.header("Idempotency-Key")
    assert first.raw == retry.raw
    record = opened.deliver(record, "authorized")
    assert opened.payment.capture(record.id, 1500).state == PaymentState.SUCCEEDED
    refund = opened.payment.refund(record.id, 500, idempotency_key="r-1", reason="duplicate")
    assert refund.provider_id.startswith("re_")
    other = opened.payment.create(700, "usd")
    assert opened.payment.cancel(other.id).state == PaymentState.CANCELED
    keys = [r.header("Idempotency-Key") for r in opened.server.requests("POST")]
    assert len(set(keys)) == len(keys) - 1  # only the retry repeats a key


# ---------------------------------------------------------------------- Paddle


def paddle_headers(**extra: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {KEYS['payment_b']}",
        "Paddle-Version": "1",
        "Content-Type": "application/json",
        **extra,
    }


ITEM = {
    "quantity": 1,
    "price": {
        "description": "Order",
        "unit_price": {"amount": "1000", "currency_code": "USD"},
        "product": {"name": "Order", "tax_category": "standard"},
    },
}


TXN = {"items": [ITEM], "currency_code": "USD"}
AS_INT = {"quantity": 1, "price": {**ITEM["price"], "unit_price": {"amount": 1000}}}


@pytest.fixture
def paddle():
    server = ProviderB(KEYS["payment_b"]).start()
    yield server
    server.stop()


@pytest.mark.parametrize(
    ("headers", "body", "status", "code"),
    [
        ({"Authorization": ""}, TXN, 401, "authentication_missing"),
        ({"Authorization": KEYS["payment_b"]}, TXN, 401, "authentication_malformed"),
        ({"Authorization": "Bearer pdl_other"}, TXN, 403, "forbidden"),
        ({"Paddle-Version": ""}, TXN, 400, "invalid_api_version"),
        ({"Paddle-Version": "2"}, TXN, 400, "invalid_api_version"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, TXN, 400, "invalid_json"),
        ({}, [ITEM], 400, "invalid_json"),
        ({}, {"currency_code": "USD"}, 400, "invalid_field"),
        ({}, {**TXN, "currency_code": "usd"}, 400, "invalid_field"),
        ({}, {**TXN, "items": [{**ITEM, "quantity": 0}]}, 400, "invalid_field"),
        ({}, {**TXN, "items": [AS_INT]}, 400, "invalid_field"),
    ],
    ids=[
        "no-auth", "auth-not-bearer", "other-key", "no-version", "version-2", "form-body",
        "json-list", "no-items", "lowercase-currency", "zero-quantity", "amount-not-string",
    ],
)  # fmt: skip
def test_paddle_refuses_malformed_transactions(paddle, headers, body, status, code):
    sent = {k: v for k, v in paddle_headers(**headers).items() if v}
    got, answer, _ = send(paddle, "POST", "/transactions", json.dumps(body).encode(), sent)
    assert got == status
    assert answer["error"]["code"] == code and "documentation_url" in answer["error"]
    assert paddle.transactions == {}


@pytest.mark.parametrize(
    "body",
    [
        {"transaction_id": "txn_1", "reason": "r", "type": "full"},
        {"action": "refund", "reason": "r", "type": "full"},
        {"action": "refund", "transaction_id": "txn_1", "type": "full"},
        {"action": "refund", "transaction_id": "txn_1", "reason": "r", "type": "partial"},
        {"action": "refund", "transaction_id": "txn_1", "reason": "r", "type": "half"},
        {"action": "refund", "transaction_id": "txn_1", "reason": "r", "type": "partial",
         "items": [{"item_id": "txnitm_1", "type": "partial", "amount": 5}]},
    ],
    ids=["no-action", "no-transaction", "no-reason", "partial-no-items", "bad-type", "amount-int"],
)  # fmt: skip
def test_paddle_refuses_malformed_adjustments(paddle, body):
    got, answer, _ = send(
        paddle, "POST", "/adjustments", json.dumps(body).encode(), paddle_headers()
    )
    assert got == 400 and answer["error"]["code"] == "invalid_field"
    assert answer["error"]["errors"][0]["field"]


def test_paddle_adapter_requests_pass(make_payment):
    opened = make_payment("payment_b")
    whole = opened.pay(opened.payment.create(1000, "usd", description="Order 17"))
    assert whole.state == PaymentState.SUCCEEDED
    assert opened.payment.refund(whole.id, idempotency_key="f", reason="asked").provider_id
    part = opened.pay(opened.payment.create(3000, "eur"))
    assert opened.payment.refund(part.id, 500, idempotency_key="p").provider_id
    other = opened.payment.create(700, "usd")
    assert opened.payment.cancel(other.id).state == PaymentState.CANCELED
    statuses = [r.header("Paddle-Version") for r in opened.server.requests()]
    assert statuses and set(statuses) == {"1"}
