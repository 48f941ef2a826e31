"""What only the ``cdn_a`` adapter has: the provider's purge wire format, chunking, error
mapping, token verification, and the outbound rules.

The provider is stood in by :class:`~.server.PurgeServer` on 127.0.0.1, which records
every request it receives.
"""

from __future__ import annotations

import logging
import socket

import pytest

from toolkit_batteries.cdn import CDNPurgeError
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.core.outbound import host_is_public

from .conftest import TOKEN, ZONE_ID, open_cdn, provider_block
from .server import ROOT, PurgeServer


@pytest.fixture
def provider(server: PurgeServer):
    container = open_cdn(provider_block(server))
    yield container.cdn()
    container.close()


def test_purge_by_url_is_the_providers_purge_call(server: PurgeServer, provider) -> None:
    urls = ["https://www.example.org/", "https://www.example.org/pricing"]
    assert provider.purge_urls(urls) == 2
    (request,) = server.requests
    assert (request.method, request.path, request.status) == (
        "POST",
        f"{ROOT}/zones/{ZONE_ID}/purge_cache",
        200,
    )
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["Content-Type"] == "application/json"
    assert "X-Auth-Key" not in request.headers and "X-Auth-Email" not in request.headers
    assert request.body == {"files": urls}


def test_purge_by_tag_sends_tags(server: PurgeServer, provider) -> None:
    assert provider.purge_tags(["product-42", "home"]) == 2
    (request,) = server.requests
    assert request.path == f"{ROOT}/zones/{ZONE_ID}/purge_cache"
    assert request.body == {"tags": ["product-42", "home"]}


def test_long_lists_go_in_requests_of_at_most_30(server: PurgeServer, provider) -> None:
    urls = [f"https://www.example.org/p/{n}" for n in range(65)]
    assert provider.purge_urls(urls) == 65
    assert [len(r.body["files"]) for r in server.requests] == [30, 30, 5]
    assert server.purged("files") == urls


def test_a_refused_token_is_a_purge_error_without_the_token(server: PurgeServer) -> None:
    container = open_cdn(provider_block(server, api_token="cftok-wrong-Yy2"))
    with pytest.raises(CDNPurgeError) as caught:
        container.cdn().purge_tags(["home"])
    assert caught.value.reason == "HTTP 403" and caught.value.purged == 0
    assert "cftok-wrong-Yy2" not in str(caught.value)
    assert "Authentication error" not in str(caught.value)  # the provider's text stays out
    assert server.requests[0].status == 403
    container.close()


def test_an_unknown_zone_is_a_404(server: PurgeServer) -> None:
    container = open_cdn(provider_block(server, zone_id="0" * 32))
    with pytest.raises(CDNPurgeError, match="HTTP 404"):
        container.cdn().purge_urls(["https://www.example.org/"])
    assert ZONE_ID not in str(server.requests[0].path) and "0" * 32 in server.requests[0].path
    container.close()


def test_a_failure_midway_reports_what_was_purged(server: PurgeServer, provider) -> None:
    urls = [f"https://www.example.org/p/{n}" for n in range(45)]
    server.fail_next(400, after=1)  # the second request of the call is refused
    with pytest.raises(CDNPurgeError) as caught:
        provider.purge_urls(urls)
    assert (caught.value.purged, caught.value.reason) == (30, "HTTP 400")
    assert "30 items purged before" in str(caught.value)
    assert server.purged("files") == urls[:30]


def test_ping_verifies_the_token(server: PurgeServer, provider) -> None:
    provider.ping()
    (request,) = server.requests
    assert (request.method, request.path) == ("GET", f"{ROOT}/user/tokens/verify")
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    container = open_cdn(provider_block(server, api_token="cftok-wrong"))
    with pytest.raises(ServiceUnavailableError, match=r"cdn\.default: unavailable: HTTP 403"):
        container.cdn().ping()
    container.close()


def test_credentials_from_the_environment_are_ignored(server, monkeypatch) -> None:
    monkeypatch.setenv("CLOUDFLARE_API_KEY", "env-global-key")
    monkeypatch.setenv("CLOUDFLARE_EMAIL", "ops@example.org")
    monkeypatch.setenv("CLOUDFLARE_API_USER_SERVICE_KEY", "v1.0-env-service-key")
    container = open_cdn(provider_block(server))
    container.cdn().purge_tags(["home"])
    container.close()
    (request,) = server.requests
    assert request.status == 200 and request.headers["Authorization"] == f"Bearer {TOKEN}"
    sent = " ".join(f"{k}: {v}" for k, v in request.headers.items())
    assert "env-global-key" not in sent and "ops@example.org" not in sent
    assert "env-service-key" not in sent


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"api_token": ""}, "api_token"),
        ({"zone_id": ""}, "zone_id"),
        ({"zone_id": "../x"}, "zone_id"),
    ],
)
def test_required_options(server: PurgeServer, options, field) -> None:
    with pytest.raises(InvalidOptionsError, match=rf'cdn\.default: option "{field}"'):
        open_cdn(provider_block(server, **options)).cdn()


def test_the_default_base_url_is_the_providers_https_api() -> None:
    container = open_cdn(
        {"adapter": "cloudflare", "options": {"api_token": TOKEN, "zone_id": ZONE_ID}}
    )
    assert str(container.cdn()._client.base_url) == "https://api.cloudflare.com/client/v4/"
    container.close()


# --------------------------------------------------------------------------- outbound rules


def test_a_loopback_base_url_is_refused_at_open_and_nothing_is_sent(server) -> None:
    with pytest.raises(InvalidOptionsError) as caught:
        open_cdn(provider_block(server, allow_private=False)).cdn()
    assert '"base_url"' in str(caught.value) and "allow_private" in str(caught.value)
    assert "127.0.0.1" not in str(caught.value)
    assert server.requests == []


def test_plain_http_is_refused_without_allow_insecure(server) -> None:
    with pytest.raises(InvalidOptionsError, match="allow_insecure"):
        open_cdn(provider_block(server, allow_insecure=False)).cdn()
    assert server.requests == []


def test_a_name_resolving_to_loopback_is_refused_when_connecting(server, monkeypatch) -> None:
    """DNS answers a public-looking name with 127.0.0.1: the guard refuses after resolution."""
    name = "api.cdn-test.example"
    assert host_is_public(name)  # the open-time check cannot know
    real = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        return real("127.0.0.1" if host == name else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    block = provider_block(
        server, base_url=f"http://{name}:{server.port}{ROOT}", allow_private=False
    )
    container = open_cdn(block)
    with pytest.raises(InvalidOptionsError) as caught:
        container.cdn().purge_urls(["https://www.example.org/"])
    assert "allow_private" in str(caught.value) and name not in str(caught.value)
    container.close()
    assert server.requests == []  # the server received nothing


def test_allowances_are_logged_at_open(server, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="toolkit.cdn")
    container = open_cdn(provider_block(server))
    container.cdn()
    container.close()
    messages = [r.getMessage() for r in caplog.records]
    # The provider base's one warning per lifted rule, naming the instance, not the URL.
    assert any("cdn.default: allow_private is on" in m for m in messages)
    assert any("cdn.default: allow_insecure is on" in m for m in messages)
