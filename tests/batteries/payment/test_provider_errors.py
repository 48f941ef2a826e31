"""The provider base's error mapping as the payment adapters show it (real local servers).

A 429 keeps the provider's ``Retry-After`` on the error (the resilience policy waits at
least that long before another attempt); the provider's text stays out of ``str(exc)``
and never carries the key.
"""

from __future__ import annotations

import pytest

from toolkit_batteries.payment.base import PaymentProviderError

from .conftest import KEYS

BUSY = {
    "payment_a": {"error": {"type": "rate_limit_error", "message": "slow"}},
    "payment_b": {
        "error": {
            "type": "request_error",
            "code": "too_many_requests",
            "detail": "slow",
            "documentation_url": "https://developer.paddle.com/errors/shared/too_many_requests",
        }
    },
}


#: The ``Retry-After`` each server sends (a fractional one to Paddle: its own test below).
WAIT = {"payment_a": "0.05", "payment_b": "1"}
#: The machine-readable code each provider's body carries (Stripe: the error type).
CODE = {"payment_a": "rate_limit_error", "payment_b": "too_many_requests"}


@pytest.mark.parametrize("variant", ["payment_a", "payment_b"])
def test_a_rate_limited_call_keeps_retry_after_and_the_provider_code(make_payment, variant):
    opened = make_payment(variant)
    body = BUSY[variant]
    for _ in range(6):  # more than any retry budget: the call fails for good
        opened.server.failures.append((429, body, {"Retry-After": WAIT[variant]}))
    with pytest.raises(PaymentProviderError) as caught:
        opened.payment.create(1000, "usd", description="Order 3")
    error = caught.value
    assert error.status == 429
    assert error.retry_after == pytest.approx(float(WAIT[variant]))
    assert error.provider_code == CODE[variant]
    assert error.provider_message == "slow"
    assert "HTTP 429" in str(error) and "slow" not in str(error)
    assert KEYS[variant] not in repr(error.__dict__)


def test_a_fractional_retry_after_from_paddle_is_a_rate_limit_not_a_bare_value_error(
    make_payment,
):
    """Paddle's SDK runs ``int('0.05')`` while reading the 429 and raises ``ValueError``.

    The adapter reports the answer behind it: the provider's rate limit, its code and the
    fractional wait (the resilience policy waits at least that long).
    """
    opened = make_payment("payment_b")
    for _ in range(6):
        opened.server.failures.append((429, BUSY["payment_b"], {"Retry-After": "0.05"}))
    with pytest.raises(PaymentProviderError) as caught:
        opened.payment.create(1000, "usd", description="Order 4")
    error = caught.value
    assert error.status == 429
    assert error.retry_after == pytest.approx(0.05)
    assert error.provider_code == "too_many_requests"
    assert error.provider_message == "slow"
    assert KEYS["payment_b"] not in repr(error.__dict__)
