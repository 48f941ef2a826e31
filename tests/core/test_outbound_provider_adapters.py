"""What the provider adapters needed from the base: nested options, headers, bounded reads.

i18n built its ``Endpoint`` by hand because the base could not name ``remote.allow_*``;
geo caught httpx's ``DecodingError`` itself; three adapters wrote their own size-capped
read loop; Paddle's SDK breaks with a bare ``ValueError`` while reading a 429 with a
fractional ``Retry-After``. Each case runs against a real local server.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
import requests

from tests.support.provider_server import Answer, ProviderServer, Received
from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.outbound import provider
from toolkit_batteries.core.outbound.provider import Kind


class _Remote:
    """A nested option group (``remote.*``) as :func:`provider.endpoint` reads it."""

    def __init__(self, endpoint: str, *, insecure: bool = False, private: bool = False) -> None:
        self.endpoint = endpoint
        self.allow_insecure = insecure
        self.allow_private = private


class _Server(ProviderServer):
    """Answers ``{"ok": true}`` to anyone, or the queued failures."""

    def authorized(self, headers: dict[str, str]) -> bool:
        return True

    def malformed(self, request: Received) -> Answer | None:
        return None

    def answer(self, handler: Any, request: Received) -> None:
        handler.send_json(200, {"ok": True})


@pytest.fixture
def server() -> Any:
    with _Server("") as running:
        yield running


def _nested(url: str, **rules: bool) -> provider.Endpoint:
    return provider.endpoint(
        _Remote(url, **rules), service="i18n", default="", instance="default",
        field="remote.endpoint",
    )  # fmt: skip


def test_a_nested_endpoint_names_its_own_relaxations() -> None:
    with pytest.raises(InvalidOptionsError) as insecure:
        _nested("http://translations.example.com")
    assert "remote.allow_insecure" in str(insecure.value)
    with pytest.raises(InvalidOptionsError) as private:
        _nested("https://127.0.0.1:8443")
    assert "remote.allow_private" in str(private.value)
    assert "127.0.0.1" not in str(private.value)
    ep = _nested("https://translations.example.com/")
    assert (ep.url, ep.field, ep.prefix) == (
        "https://translations.example.com",
        "remote.endpoint",
        "remote.",
    )
    flat = provider.endpoint(
        _Remote("https://a.example.com"), service="svc", default="", instance="default"
    )
    assert flat.prefix == "" and flat.option("allow_private") == "allow_private"


def test_warn_relaxed_and_blocked_error_name_the_nested_options(
    caplog: pytest.LogCaptureFixture, server: _Server
) -> None:
    caplog.set_level(logging.WARNING)
    relaxed = _nested(server.url, insecure=True, private=True)
    provider.warn_relaxed(logging.getLogger("toolkit.i18n"), relaxed)
    assert "i18n.default: remote.allow_private is on" in caplog.text
    assert "i18n.default: remote.allow_insecure is on" in caplog.text
    guarded = provider.Endpoint(server.url, "i18n", "remote.endpoint", "default", True, False,
                                prefix="remote.")  # fmt: skip
    with (
        provider.httpx_client(guarded, timeout=2) as client,
        pytest.raises(Exception) as caught,
    ):
        client.get(server.url + "/catalogs/fr")
    failure = provider.failure_of(caught.value)
    assert failure is not None and failure.kind is Kind.BLOCKED
    error = provider.blocked_error(guarded)
    assert "set remote.allow_private" in str(error) and error.field == "remote.endpoint"
    assert server.requests() == []


def test_httpx_client_sends_its_headers_on_every_request(server: _Server) -> None:
    ep = _nested(server.url, insecure=True, private=True)
    headers = {"Accept": "application/json", "Authorization": "Bearer k-123"}
    with provider.httpx_client(ep, timeout=5, headers=headers) as client:
        client.get(server.url + "/a")
        client.get(server.url + "/b", headers={"X-Extra": "1"})
    seen = server.requests()
    assert [r.path for r in seen] == ["/a", "/b"]
    assert all(r.header("authorization") == "Bearer k-123" for r in seen)
    assert all(r.header("accept") == "application/json" for r in seen)
    assert seen[1].header("x-extra") == "1"


def test_an_answer_its_encoding_does_not_decode_is_malformed_not_retryable(
    server: _Server,
) -> None:
    ep = _nested(server.url, insecure=True, private=True)
    not_gzip = b"this is not gzip"
    server.failures.append((200, not_gzip, {"Content-Encoding": "gzip"}))
    with (
        provider.httpx_client(ep, timeout=5) as client,
        pytest.raises(httpx.DecodingError) as caught,
    ):
        client.get(server.url + "/x")
    failure = provider.failure_of(caught.value)
    assert failure is not None
    assert (failure.kind, failure.status, failure.retryable) == (Kind.MALFORMED, None, False)


def test_read_bounded_stops_at_the_limit_and_runs_each_per_chunk() -> None:
    calls: list[int] = []

    class TooLarge(Exception):
        pass

    chunks = [b"abc", b"def", b"ghi"]
    assert provider.read_bounded(iter(chunks), 9, each=lambda: calls.append(1)) == b"abcdefghi"
    assert len(calls) == 3
    with pytest.raises(TooLarge):
        provider.read_bounded(iter(chunks), 8, too_large=TooLarge)
    with pytest.raises(ValueError, match="too large"):
        provider.read_bounded(iter(chunks), 5)

    def late() -> None:
        raise TimeoutError("past the deadline")

    with pytest.raises(TimeoutError):
        provider.read_bounded(iter(chunks), 100, each=late)


def _paddle_like_call(server: _Server) -> None:
    """Do what Paddle's SDK does: ``raise_for_status``, then ``int()`` the Retry-After."""
    ep = _nested(server.url, insecure=True, private=True)
    answer = provider.requests_session(ep).get(server.url + "/transactions")
    try:
        answer.raise_for_status()
    except requests.HTTPError as exc:
        int(exc.response.headers["Retry-After"])  # ValueError on "0.05"


def test_an_sdk_that_breaks_reading_an_http_error_is_read_as_that_error(
    server: _Server,
) -> None:
    body = {"error": {"code": "too_many_requests", "detail": "slow"}}
    server.failures.append((429, body, {"Retry-After": "0.05"}))
    with pytest.raises(ValueError) as caught:
        _paddle_like_call(server)
    behind = provider.http_error_behind(caught.value)
    assert isinstance(behind, requests.HTTPError)
    failure = provider.failure_of(caught.value, code="too_many_requests")
    assert failure is not None
    assert (failure.kind, failure.status, failure.retryable) == (Kind.RATE_LIMITED, 429, True)
    assert failure.retry_after == pytest.approx(0.05)
    assert provider.error_body(caught.value)["error"]["code"] == "too_many_requests"


def test_a_value_error_that_hides_its_context_or_has_none_is_not_read() -> None:
    assert provider.http_error_behind(ValueError("x")) is None
    assert provider.error_body(ValueError("x")) == {}
    response = requests.Response()
    response.status_code = 429
    try:
        try:
            raise requests.HTTPError("busy", response=response)
        except requests.HTTPError:
            raise ValueError("an adapter's own error") from None
    except ValueError as hidden:
        assert provider.http_error_behind(hidden) is None
        assert provider.failure_of(hidden) is None
