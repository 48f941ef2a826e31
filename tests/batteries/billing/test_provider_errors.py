"""The provider base's error mapping as the billing adapters show it (local servers).

A 429 keeps the provider's ``Retry-After`` on the error (the resilience policy waits at
least that long before another attempt), whole or fractional: Paddle's SDK runs
``int()`` on the header and raises a bare ``ValueError`` on ``0.05``, which the adapter
must still report as the provider's rate limit. The provider's text never reaches
``str(exc)`` and the key never reaches the error.
"""

from __future__ import annotations

import pytest

from toolkit_batteries.billing.errors import ProviderError

from .fakes import PADDLE_KEY, STRIPE_KEY, FakePaddle, FakeStripe

KEYS = {"billing_a": STRIPE_KEY, "billing_b": PADDLE_KEY}
#: Each provider's documented 429 body.
BUSY = {
    "billing_a": FakeStripe.error(429, "rate_limit", "slow")[1],
    "billing_b": FakePaddle.error(429, "too_many_requests", "slow")[1],
}
#: Each provider's machine-readable code in that body.
CODE = {"billing_a": "rate_limit", "billing_b": "too_many_requests"}


@pytest.mark.parametrize("wait", ["2", "0.05"])
@pytest.mark.parametrize("variant", ["billing_a", "billing_b"])
def test_a_rate_limited_call_keeps_retry_after_and_the_provider_code(make_billing, variant, wait):
    opened = make_billing(variant)
    for _ in range(6):  # more than any retry budget: the call fails for good
        opened.fake.failures.append((429, BUSY[variant], {"Retry-After": wait}))
    with pytest.raises(ProviderError) as caught:
        opened.billing.create_customer("ada@example.com", name="Ada")
    error = caught.value
    assert error.status == 429
    assert error.retry_after == pytest.approx(float(wait))
    assert str(error).endswith(f"(HTTP 429, {CODE[variant]})")
    assert "slow" not in str(error)
    assert KEYS[variant] not in repr(error.__dict__)
    assert opened.fake.failures, "the call was retried past the test's budget"


@pytest.mark.parametrize("variant", ["billing_a", "billing_b"])
def test_a_server_error_has_no_retry_after_when_the_provider_sends_none(make_billing, variant):
    opened = make_billing(variant)
    for _ in range(6):
        opened.fake.failures.append((503, BUSY[variant], {}))
    with pytest.raises(ProviderError) as caught:
        opened.billing.create_customer("ada@example.com", name="Ada")
    assert caught.value.status == 503 and caught.value.retry_after is None
    assert caught.value.code == "unavailable"
