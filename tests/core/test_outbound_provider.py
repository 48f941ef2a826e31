"""The provider base (``core.outbound.provider``) against a real local HTTP server.

Every failure is produced by a real answer (or a real refused connection) and read back
through the guarded ``httpx`` client and the guarded ``requests`` session, as the provider
adapters receive them.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
import requests

from tests.support.provider_server import Answer, ProviderServer, Received
from toolkit_batteries.core import webhook_signatures
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import provider
from toolkit_batteries.core.outbound.provider import Kind

KEY = "sk_test_provider_base_secret"


class _Options:
    """The option attributes :func:`provider.endpoint` reads."""

    def __init__(self, **values: Any) -> None:
        self.endpoint = values.get("endpoint", "")
        self.allow_insecure = values.get("allow_insecure", False)
        self.allow_private = values.get("allow_private", False)
        self.insecure_skip_verify = values.get("insecure_skip_verify", False)


class _Server(ProviderServer):
    """Answers ``{"ok": true}`` to a bearer-authenticated request; else queued failures."""

    def authorized(self, headers: dict[str, str]) -> bool:
        return headers.get("authorization") == f"Bearer {self.key}"

    def unauthorized(self) -> Answer:
        return 401, {"error": {"type": "authentication_error", "message": f"bad key {KEY}"}}

    def malformed(self, request: Received) -> Answer | None:
        return None

    def answer(self, handler: Any, request: Received) -> None:
        handler.send_json(200, {"ok": True})


@pytest.fixture
def server() -> Any:
    with _Server(KEY) as running:
        yield running


def _endpoint(url: str, *, allow_private: bool = True) -> provider.Endpoint:
    options = _Options(endpoint=url, allow_insecure=True, allow_private=allow_private)
    return provider.endpoint(options, service="svc", default="", instance="default")


def _httpx_failure(server: _Server, key: str = KEY) -> provider.Failure | None:
    with provider.httpx_client(_endpoint(server.url), timeout=5) as client:
        try:
            client.get(server.url + "/x", headers={"Authorization": f"Bearer {key}"})
            answer = client.get(server.url + "/x", headers={"Authorization": f"Bearer {key}"})
            answer.raise_for_status()
        except httpx.HTTPError as exc:
            return provider.failure_of(exc, secrets=(KEY,), message=exc.response.text)
    return None


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (400, Kind.INVALID, False),
        (403, Kind.AUTH, False),
        (404, Kind.NOT_FOUND, False),
        (409, Kind.CONFLICT, False),
        (422, Kind.INVALID, False),
        (429, Kind.RATE_LIMITED, True),
        (500, Kind.UNAVAILABLE, True),
        (503, Kind.UNAVAILABLE, True),
    ],
)
def test_an_error_status_is_read_into_its_kind_over_requests(
    server: _Server, status: int, kind: Kind, retryable: bool
) -> None:
    server.failures.append((status, {"error": {"code": "nope"}}, {"Retry-After": "2"}))
    session = provider.requests_session(_endpoint(server.url))
    answer = session.get(server.url + "/x", headers={"Authorization": f"Bearer {KEY}"})
    with pytest.raises(requests.HTTPError) as caught:
        answer.raise_for_status()
    failure = provider.failure_of(caught.value, code="nope")
    assert failure is not None
    assert (failure.kind, failure.status, failure.code) == (kind, status, "nope")
    assert failure.retryable is retryable
    assert failure.retry_after == 2.0


def test_a_401_is_an_auth_failure_and_its_message_loses_the_key(server: _Server) -> None:
    failure = _httpx_failure(server, key="wrong")
    assert failure is not None
    assert (failure.kind, failure.status, failure.retryable) == (Kind.AUTH, 401, False)
    assert "bad key" in failure.message
    assert KEY not in failure.message


def test_a_refused_connection_is_a_retryable_connection_failure(server: _Server) -> None:
    url = server.url
    server.stop()
    with (
        provider.httpx_client(_endpoint(url), timeout=2) as client,
        pytest.raises(httpx.TransportError) as caught,
    ):
        client.get(url + "/x")
    failure = provider.failure_of(caught.value)
    assert failure is not None
    assert (failure.kind, failure.status, failure.retryable) == (Kind.CONNECTION, None, True)


def test_a_slow_answer_is_a_timeout(server: _Server) -> None:
    server.delay = 1.0
    with (
        provider.httpx_client(_endpoint(server.url), timeout=0.2) as client,
        pytest.raises(httpx.TimeoutException) as caught,
    ):
        client.get(server.url + "/x", headers={"Authorization": f"Bearer {KEY}"})
    failure = provider.failure_of(caught.value)
    assert failure is not None and failure.kind is Kind.TIMEOUT and failure.retryable


@pytest.mark.parametrize("client", ["httpx", "requests"])
def test_a_private_address_is_refused_at_connect_time_without_allow_private(
    server: _Server, client: str
) -> None:
    with pytest.raises(InvalidOptionsError, match="allow_private"):  # checked at open...
        _endpoint(server.url, allow_private=False)
    ep = provider.Endpoint(server.url, "svc", "endpoint", "default", True, False)
    with pytest.raises(Exception) as caught:  # ...and every resolved address when connecting
        if client == "httpx":
            with provider.httpx_client(ep, timeout=2) as guarded:
                guarded.get(server.url + "/x")
        else:
            provider.requests_session(ep).get(server.url + "/x")
    failure = provider.failure_of(caught.value)
    assert failure is not None and failure.kind is Kind.BLOCKED
    assert server.requests() == []
    error = provider.blocked_error(ep)
    assert isinstance(error, InvalidOptionsError) and "set allow_private" in str(error)
    assert "127.0.0.1" not in str(error)


def test_an_unrelated_exception_is_not_a_provider_failure() -> None:
    assert provider.failure_of(KeyError("x")) is None
    assert provider.failure_of(ValueError("x")) is None


def test_endpoint_refuses_plain_http_and_private_hosts_by_default() -> None:
    with pytest.raises(InvalidOptionsError, match="must use https"):
        provider.endpoint(
            _Options(endpoint="http://api.example.com"), service="svc", default="", instance="i"
        )
    with pytest.raises(InvalidOptionsError, match="allow_private"):
        provider.endpoint(
            _Options(endpoint="https://127.0.0.1:1"), service="svc", default="", instance="i"
        )
    ep = provider.endpoint(
        _Options(), service="svc", default="https://api.example.com/", instance="i"
    )
    assert ep.url == "https://api.example.com"


def test_required_names_the_field_and_the_adapter() -> None:
    with pytest.raises(InvalidOptionsError, match=r"api_key.*required by the llm_a adapter"):
        provider.required("  ", service="ai", field="api_key", adapter="llm_a", instance="i")
    assert provider.required(" k ", service="ai", field="api_key", adapter="a", instance="i") == "k"


def test_warn_relaxed_logs_each_lifted_rule(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("toolkit.test.provider")
    ep = provider.Endpoint("http://x", "svc", "endpoint", "i", True, True, True)
    with caplog.at_level(logging.WARNING, logger=logger.name):
        provider.warn_relaxed(logger, ep)
    text = caplog.text
    assert "allow_private is on" in text and "allow_insecure is on" in text
    assert "NOT verified" in text


def test_scrub_removes_the_key_and_other_credentials() -> None:
    text = provider.scrub(f"key {KEY} via https://user:hunter2@proxy.example/", KEY)
    assert KEY not in text and "hunter2" not in text


def test_signed_json_checks_signature_and_tolerance_on_the_given_clock() -> None:
    body = b'{"id": "evt_1"}'
    header = webhook_signatures.sign(webhook_signatures.STRIPE, "whsec_x", 1_000, body)
    headers = {"Stripe-Signature": header}

    def fail(reason: str) -> Exception:
        return PermissionError(reason)

    stamp, payload = provider.signed_json(
        webhook_signatures.STRIPE,
        headers,
        body,
        "whsec_x",
        tolerance=300,
        now=lambda: 1_200.0,
        fail=fail,
    )
    assert (stamp, payload) == (1000.0, {"id": "evt_1"})
    with pytest.raises(PermissionError, match="outside the tolerance"):
        provider.signed_json(
            webhook_signatures.STRIPE,
            headers,
            body,
            "whsec_x",
            tolerance=300,
            now=lambda: 1_301.0,
            fail=fail,
        )
    with pytest.raises(PermissionError, match="no signature matches"):
        provider.signed_json(
            webhook_signatures.STRIPE,
            headers,
            body + b" ",
            "whsec_x",
            tolerance=300,
            now=lambda: 1_000.0,
            fail=fail,
        )
    paddle = webhook_signatures.sign(webhook_signatures.PADDLE, "pdl", 1_000, b"not json")
    with pytest.raises(PermissionError, match="not JSON"):
        provider.signed_json(
            webhook_signatures.PADDLE,
            {"Paddle-Signature": paddle},
            b"not json",
            "pdl",
            tolerance=5,
            now=lambda: 1_000.0,
            fail=fail,
        )


def test_read_json_refuses_an_answer_over_the_limit(server: _Server) -> None:
    with provider.httpx_client(_endpoint(server.url), timeout=5) as client:
        headers = {"Authorization": f"Bearer {KEY}"}
        with client.stream("GET", server.url + "/x", headers=headers) as answer:
            assert provider.read_json(answer, 100) == {"ok": True}
        with (
            client.stream("GET", server.url + "/x", headers=headers) as answer,
            pytest.raises(ValueError, match="too large"),
        ):
            provider.read_json(answer, 5)


def test_a_stopped_stand_in_answers_nothing_more_on_a_kept_alive_connection() -> None:
    """An outage test must see the outage: ``stop()`` ends connections the client kept."""
    running = _Server(KEY).start()
    with httpx.Client(headers={"Authorization": f"Bearer {KEY}"}, timeout=5) as client:
        assert client.get(running.url + "/ping").json() == {"ok": True}
        running.stop()
        with pytest.raises(httpx.TransportError):
            client.get(running.url + "/ping")
