"""The decorator, the middleware and the DRF throttle, through Django's test client."""

from __future__ import annotations

import json

import pytest
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from tests.ports import free_port
from tests.support.checks import battery_messages
from toolkit_batteries.ratelimit.decorators import ratelimit
from toolkit_batteries.ratelimit.middleware import RateLimitMiddleware

URLS = "tests.batteries.ratelimit.views"
DRF = {"EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler"}
MIDDLEWARE = "toolkit_batteries.ratelimit.middleware.RateLimitMiddleware"


def limits(rate: float = 1, burst: int = 2, **instances: dict) -> dict:
    block = {"default": {"adapter": "memory", "options": {"rate": rate, "burst": burst}}}
    for name, options in instances.items():
        block[name] = {"adapter": "memory", "options": options}
    return {"ratelimit": block}


def assert_refused(response, retry_after: str) -> None:
    assert response.status_code == 429
    assert response["Retry-After"] == retry_after
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body == {
        "error": {"code": "resource_exhausted", "message": "rate limit exceeded, retry later"}
    }


@pytest.fixture
def client():
    with override_settings(ROOT_URLCONF=URLS, MIDDLEWARE=[]):
        yield Client()


def test_decorator_refuses_with_429_and_an_integer_retry_after(client):
    with override_settings(TOOLKIT=limits(rate=0.4, burst=2)):
        assert client.get("/login").status_code == 200
        assert client.get("/login").status_code == 200
        assert_refused(client.get("/login"), "3")  # 1 token / 0.4 per s = 2.5 s, ceiled


def test_retry_after_is_at_least_one_second(client):
    with override_settings(TOOLKIT=limits(rate=2, burst=1)):  # 0.5 s, ceiled to 1
        client.get("/login")
        assert_refused(client.get("/login"), "1")


def test_each_view_and_each_client_has_its_own_bucket(client):
    with override_settings(TOOLKIT=limits(rate=0.001, burst=1)):
        assert client.get("/login").status_code == 200
        assert client.get("/search").status_code == 200
        assert client.get("/login", REMOTE_ADDR="10.0.0.2").status_code == 200
        assert client.get("/login").status_code == 429
        assert client.get("/search").status_code == 429


def test_callable_key_instance_and_cost(client):
    with override_settings(TOOLKIT=limits(strict={"rate": 0.001, "burst": 4})):
        assert client.get("/weighted", HTTP_X_CLIENT="a").status_code == 200
        assert client.get("/weighted", HTTP_X_CLIENT="a").status_code == 200  # 4 tokens gone
        assert client.get("/weighted", HTTP_X_CLIENT="a").status_code == 429
        assert client.get("/weighted", HTTP_X_CLIENT="b").status_code == 200
        for _ in range(5):  # a None key is not limited
            assert client.get("/weighted").status_code == 200


@pytest.mark.parametrize("url", ["/class", "/drf/function", "/drf/method"])
def test_class_based_and_drf_views(client, url):
    with override_settings(TOOLKIT=limits(rate=0.001, burst=1)):
        assert client.get(url).status_code == 200
        assert_refused(client.get(url), "1000")


def test_drf_throttle_answers_429_with_retry_after(client):
    with override_settings(TOOLKIT=limits(strict={"rate": 0.25, "burst": 1})):
        assert client.get("/drf/throttled").status_code == 200
        refused = client.get("/drf/throttled")
        assert refused.status_code == 429 and refused["Retry-After"] == "4"


def test_unreachable_limiter_fails_open_by_default_and_closed_when_asked(client, caplog):
    broken = {
        "ratelimit": {
            "adapter": "kvserver",
            "options": {"kvserver": {"addr": f"127.0.0.1:{free_port()}"}},
        }
    }
    with override_settings(TOOLKIT=broken):
        assert client.get("/login").status_code == 200
        assert "fail open" in caplog.text
        response = client.get("/closed")
        assert response.status_code == 503 and response["Retry-After"] == "1"
        assert json.loads(response.content)["error"]["code"] == "unavailable"


def test_bad_configuration_is_never_swallowed(client):
    with (
        override_settings(TOOLKIT={"ratelimit": {"options": {"rate": -1}}}),
        pytest.raises(ImproperlyConfigured, match='option "rate"'),
    ):
        client.get("/login")


def test_decorator_rejects_an_unknown_key_name():
    with pytest.raises(ValueError, match="ratelimit key"):
        ratelimit(key="address")


BEARER_SECRET = "ratelimit-tests-secret-" + "s" * 32


def bearer_limits(**instances: dict) -> dict:
    """Limits plus the real jwt auth adapter, so tokens are issued and verified for real."""
    toolkit = limits(**instances)
    toolkit["auth"] = {"adapter": "jwt", "options": {"jwt": {"secret": BEARER_SECRET}}}
    return toolkit


def bearer(subject: str) -> dict[str, str]:
    from toolkit_batteries import services

    return {"HTTP_AUTHORIZATION": f"Bearer {services.auth().issue(subject).token}"}


@pytest.mark.parametrize("url", ["/per-user", "/drf/per-user"])
def test_user_key_gives_each_verified_bearer_its_own_bucket(client, url):
    with override_settings(
        TOOLKIT=bearer_limits(strict={"rate": 0.001, "burst": 1}), REST_FRAMEWORK=DRF
    ):
        alice, bob = bearer("alice"), bearer("bob")
        assert client.get(url, **alice).status_code == 200
        assert client.get(url, **alice).status_code == 429
        # Same address, another verified user: a bucket of its own.
        assert client.get(url, **bob).status_code == 200
        # A new token of the same subject is the same user: still refused.
        assert client.get(url, **bearer("alice")).status_code == 429
        # A forged token never reaches the limiter as a user; it is refused as 401.
        forged = {"HTTP_AUTHORIZATION": "Bearer " + "x" * 40}
        assert client.get(url, **forged).status_code == 401


def test_user_key_outside_bearer_auth_falls_back_to_the_address(client):
    """Above ``@bearer_required`` no user is verified yet: callers share their address."""
    with override_settings(TOOLKIT=bearer_limits(strict={"rate": 0.001, "burst": 1})):
        assert client.get("/per-user-before-auth", **bearer("alice")).status_code == 200
        assert client.get("/per-user-before-auth", **bearer("bob")).status_code == 429
        other_address = {"REMOTE_ADDR": "10.0.0.9", **bearer("bob")}
        assert client.get("/per-user-before-auth", **other_address).status_code == 200


RULES = [
    {"prefix": "/api/", "key": "ip"},
    {"prefix": "/api/v1/auth/", "key": "ip", "instance": "strict", "methods": ["post"]},
]


def test_middleware_limits_by_prefix_and_method():
    settings = limits(rate=0.001, burst=3, strict={"rate": 0.001, "burst": 1})
    with override_settings(
        ROOT_URLCONF=URLS, MIDDLEWARE=[MIDDLEWARE], TOOLKIT_RATELIMIT_RULES=RULES, TOOLKIT=settings
    ):
        client = Client()
        for _ in range(5):
            assert client.get("/other").status_code == 200  # no rule matches
        # The longest prefix wins, for POST only; a GET falls through to no limit at all
        # (one rule per request: the auth rule matched, the method did not).
        assert client.post("/api/v1/auth/login").status_code == 200
        assert_refused(client.post("/api/v1/auth/login"), "1000")
        for _ in range(4):
            assert client.get("/api/v1/auth/login").status_code == 200
        assert [client.get("/api/v1/items").status_code for _ in range(4)] == [200] * 3 + [429]


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ([{"key": "ip"}], 'needs a "prefix"'),
        ([{"prefix": "/a", "rate": 3}], "unknown keys rate"),
        ([{"prefix": "/a", "key": "nonsense"}], "ratelimit key"),
    ],
)
def test_middleware_rejects_bad_rules(rules, message):
    with (
        override_settings(TOOLKIT_RATELIMIT_RULES=rules),
        pytest.raises(ImproperlyConfigured, match=message),
    ):
        RateLimitMiddleware(lambda request: None)


def ratelimit_messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_ratelimit")


@pytest.mark.parametrize(
    ("toolkit", "expected"),
    [
        ({}, []),
        ({"ratelimit": {"options": {"rate": -1}}}, ["toolkit_ratelimit.E002"]),
        ({"ratelimit": {"options": {"burst": -5}}}, ["toolkit_ratelimit.E002"]),
        ({"ratelimit": {"options": {"idle_ttl": "-1s"}}}, ["toolkit_ratelimit.E002"]),
        (
            {"ratelimit": {"adapter": "kvserver", "options": {"kvserver": {"url": "redis://x"}}}},
            ["toolkit_ratelimit.W001"],
        ),
        ({"ratelimit": {"adapter": "nope"}}, ["toolkit_ratelimit.E001"]),
    ],
)
def test_checks(toolkit, expected):
    with override_settings(TOOLKIT=toolkit):
        messages = ratelimit_messages()
    assert [m.id for m in messages] == expected
    for message in messages:
        assert "-1" not in message.msg and "-5" not in message.msg
