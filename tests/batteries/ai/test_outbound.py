"""The outbound rules on every adapter: SSRF refusals, https only, TLS verification, time-outs.

``allow_private`` off: a loopback literal fails the open, and a name that resolves to
loopback (``socket.getaddrinfo`` answering 127.0.0.1 for it, as a hostile DNS would) is
refused when connecting; either way the fake receives nothing.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.certs import self_signed
from toolkit_batteries.ai import AIProviderError
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError

from .conftest import ADAPTERS, block, new_key, open_ai
from .server import FAKES, TEXT, FakeProvider

HOSTILE = "llm.example.test"


@pytest.fixture(params=ADAPTERS)
def fake(request: pytest.FixtureRequest) -> Iterator[tuple[str, FakeProvider, str]]:
    adapter = request.param
    key = new_key(adapter)
    server = FAKES[adapter](key).start()
    try:
        yield adapter, server, key
    finally:
        server.stop()


@pytest.fixture
def hostile_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolve :data:`HOSTILE` to 127.0.0.1, like a DNS answer pointing inside."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        return real("127.0.0.1" if host == HOSTILE else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def _open(adapter: str, server: FakeProvider, key: str, **options) -> tuple[object, Container]:
    container = Container(Config.load({"ai": block(adapter, server, key, **options)}, {}))
    ai = container.ai()
    ai.configure(sleep=lambda seconds: None)
    return ai, container


def test_a_loopback_literal_needs_allow_private(fake) -> None:
    adapter, server, key = fake
    container = Container(Config.load({"ai": block(adapter, server, key, allow_private=False)}, {}))
    with pytest.raises(InvalidOptionsError) as caught:
        container.ai()
    assert caught.value.field == "base_url" and "allow_private" in str(caught.value)
    assert "127.0.0.1" not in str(caught.value) and key not in str(caught.value)
    assert server.received == []
    container.close()


@pytest.mark.usefixtures("hostile_dns")
def test_a_name_resolving_to_loopback_is_refused_when_connecting(fake) -> None:
    adapter, server, key = fake
    url = server.url.replace("127.0.0.1", HOSTILE)
    ai, container = _open(adapter, server, key, base_url=url, allow_private=False)
    with pytest.raises(InvalidOptionsError, match="resolves to a private") as caught:
        ai.complete("hi")
    assert caught.value.field == "base_url"
    assert HOSTILE not in str(caught.value) and key not in str(caught.value)
    with pytest.raises(InvalidOptionsError):
        ai.stream([{"role": "user", "content": "hi"}])
    assert server.received == []  # refused before connecting, and not retried
    container.close()
    allowed, container = _open(adapter, server, key, base_url=url, allow_private=True)
    assert allowed.complete("hi").text == TEXT  # the same name, allowed: it was reachable
    assert len(server.received) == 1
    container.close()


def test_http_needs_allow_insecure(fake) -> None:
    adapter, server, key = fake
    container = Container(
        Config.load({"ai": block(adapter, server, key, allow_insecure=False)}, {})
    )
    with pytest.raises(InvalidOptionsError, match="allow_insecure") as caught:
        container.ai()
    assert caught.value.field == "base_url"
    assert server.received == []
    container.close()


def test_a_slow_provider_times_out_and_is_retried(fake) -> None:
    adapter, server, key = fake
    server.delay = 1.0
    ai, container = _open(adapter, server, key, timeout="200ms")
    with pytest.raises(AIProviderError) as caught:
        ai.complete("hi")
    assert caught.value.kind == "timeout" and caught.value.retryable
    assert caught.value.status is None
    container.close()
    assert len(server.received) == 3


@pytest.fixture
def tls(tmp_path: Path) -> tuple[Path, Path]:
    return self_signed(tmp_path)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_tls_is_verified_unless_insecure_skip_verify(adapter, tls, caplog) -> None:
    key = new_key(adapter)
    server = FAKES[adapter](key, tls=tls).start()
    try:
        ai, container = open_ai(adapter, server, key)
        with pytest.raises(AIProviderError) as caught:  # a self-signed certificate
            ai.complete("hi")
        assert caught.value.kind == "connection"
        assert server.received == []
        container.close()
        caplog.set_level(logging.WARNING, logger="toolkit.ai")
        ai, container = open_ai(adapter, server, key, insecure_skip_verify=True)
        assert any(
            "insecure_skip_verify is on" in r.getMessage() and r.levelno == logging.WARNING
            for r in caplog.records
        )
        assert ai.complete("hi").text == TEXT
        assert len(server.received) == 1
        container.close()
    finally:
        server.stop()


def test_relaxed_rules_are_logged_at_open(fake, caplog) -> None:
    adapter, server, key = fake
    caplog.set_level(logging.WARNING, logger="toolkit.ai")
    _ai, container = _open(adapter, server, key)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("allow_private is on" in m for m in warnings)
    assert any("allow_insecure is on" in m for m in warnings)
    assert not any("insecure_skip_verify" in m for m in warnings)
    assert server.received == []  # opening sends nothing
    container.close()


def test_a_cookie_the_provider_sets_is_never_sent_back(fake) -> None:
    """Calls authenticate by key alone: a provider's cookie (a load balancer's) is not kept."""
    adapter, server, key = fake
    ai, container = _open(adapter, server, key)
    try:
        server.failures.append(
            (503, {"error": {"message": "busy"}}, {"Set-Cookie": "lb=node-7; Path=/"})
        )
        assert ai.complete("hi").text == TEXT  # the 503, then the retry
        ai.complete("again")
    finally:
        container.close()
    first, *later = server.received
    assert first.status == 503 and len(later) == 2
    assert [r.header("cookie") for r in later] == [None, None]


def test_the_address_check_runs_once_per_connection_and_again_on_a_new_one(
    fake, monkeypatch
) -> None:
    """The guard resolves and checks when a connection opens, not on every call: calls on a
    kept-alive connection add no lookup (the per-call cost stays the raw SDK's), and a new
    connection (the provider dropped the old one) is resolved and checked again."""
    adapter, server, key = fake
    real = socket.getaddrinfo
    lookups: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        if host == HOSTILE:
            lookups.append(host)
            host = "127.0.0.1"
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    url = server.url.replace("127.0.0.1", HOSTILE)
    ai, container = _open(adapter, server, key, base_url=url)
    try:
        assert [ai.complete(f"call {n}").text for n in range(3)] == [TEXT] * 3
        assert len(lookups) == 1  # one connection, kept alive, checked once
        server._server.drop_connections()
        assert ai.complete("after the drop").text == TEXT
        assert len(lookups) == 2  # the new connection was resolved and checked
    finally:
        container.close()
    assert len(server.received) == 4
