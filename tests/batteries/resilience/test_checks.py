"""The resilience app, its checks, options from configuration, and the decorator."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import override_settings

from tests.support.checks import battery_messages
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.resilience import resilient
from toolkit_batteries.resilience.adapters.memory import MemoryPolicy


def resilience_messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_resilience")


@pytest.mark.parametrize(
    ("toolkit", "expected"),
    [
        ({}, []),
        (
            {"resilience": {"options": {"bulkhead": {"max_concurrent": -1}}}},
            ["toolkit_resilience.E002"],
        ),
        (
            {"resilience": {"options": {"breaker": {"enabled": True, "timeout": "-1s"}}}},
            ["toolkit_resilience.E002"],
        ),
        (
            {"resilience": {"options": {"retry": {"BaseDelay": "-5ms"}}}},
            ["toolkit_resilience.E002"],
        ),
        ({"resilience": {"adapter": "kvserver"}}, ["toolkit_resilience.W002"]),
        (
            {
                "resilience": {
                    "adapter": "kvserver",
                    "options": {"breaker": {"enabled": True}, "kvserver": {"url": "redis://x"}},
                }
            },
            ["toolkit_resilience.W001"],
        ),
        ({"resilience": {"adapter": "hystrix"}}, ["toolkit_resilience.E001"]),
    ],
)
def test_checks(toolkit, expected):
    with override_settings(TOOLKIT=toolkit):
        messages = resilience_messages()
    assert [m.id for m in messages] == expected
    assert all("-5" not in m.msg and "-1" not in m.msg for m in messages)


def test_defaults_are_the_spec_values():
    container = Container(Config.load({}, {}))
    policy = container.resilience()
    assert isinstance(policy, MemoryPolicy)
    s = policy.settings
    assert (s.name, s.timeout, s.breaker) == ("default", 5.0, None)
    assert (s.max_concurrent, s.max_queue, s.max_wait) == (100, 100, 1.0)
    retry = s.retry
    assert (retry.base_delay.total_seconds(), retry.max_delay.total_seconds()) == (0.05, 2.0)
    assert (retry.multiplier, retry.jitter, retry.max_attempts) == (2.0, 0.1, 3)
    container.close()


def test_breaker_defaults_and_interval_rounded_to_buckets():
    settings = {"resilience": {"options": {"breaker": {"enabled": True}}}}
    breaker = Container(Config.load(settings, {})).resilience().settings.breaker
    assert (breaker.max_requests, breaker.timeout_ms, breaker.min_requests) == (1, 30_000, 10)
    assert (breaker.failure_ratio, breaker.consecutive_failures) == (0.5, 5)
    assert (breaker.bucket_ms, breaker.buckets, breaker.interval_ms) == (10_000, 3, 30_000)
    odd = {"breaker": {"enabled": True, "interval": "25s", "bucket_period": "10s"}}
    rounded = Container(Config.load({"resilience": {"options": odd}}, {})).resilience()
    assert rounded.settings.breaker.interval_ms == 30_000


def test_invalid_values_fail_the_open_naming_the_field_only():
    bad = {"resilience": {"options": {"breaker": {"enabled": True, "max_requests": -3}}}}
    with pytest.raises(InvalidOptionsError, match=r'option "breaker\.max_requests"') as caught:
        Container(Config.load(bad, {})).resilience()
    assert "-3" not in str(caught.value)


def test_resilient_decorator_uses_the_configured_instance():
    calls = []

    @resilient("payments", name="charge")
    def charge(amount):
        calls.append(amount)
        if len(calls) < 2:
            raise ConnectionError("flaky")
        return amount * 2

    toolkit = {
        "resilience": {
            "payments": {"adapter": "memory", "options": {"retry": {"BaseDelay": "1ms"}}}
        }
    }
    with override_settings(TOOLKIT=toolkit):
        assert charge(21) == 42
        assert calls == [21, 21]
        assert charge.__name__ == "charge"
