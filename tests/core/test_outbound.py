"""The shared outbound rules: public targets only (after DNS too), https only, and the
transports for httpx, requests and urllib, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
import sys
import threading
import urllib.error
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import requests

from tests.certs import self_signed
from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError
from toolkit_batteries.core.outbound import (
    OutboundBlockedError,
    check_url,
    connect,
    host_is_public,
    is_blocked,
    is_public,
    resolve_public,
)
from toolkit_batteries.core.outbound.httpx_transport import (
    AsyncGuardedTransport,
    GuardedTransport,
)
from toolkit_batteries.core.outbound.requests_adapter import guarded_session
from toolkit_batteries.core.outbound.urllib_opener import guarded_opener

NON_PUBLIC = [
    "127.0.0.1",
    "127.8.9.10",
    "10.1.2.3",
    "172.16.5.4",
    "192.168.0.10",
    "169.254.169.254",  # link-local (cloud metadata)
    "100.64.0.1",  # carrier-grade NAT
    "0.0.0.0",
    "224.0.0.1",  # multicast
    "::1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "::ffff:127.0.0.1",  # IPv4-mapped IPv6
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]


class _Counter(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.hits += 1  # type: ignore[attr-defined]
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    """Serve plain HTTP on 127.0.0.1, counting the requests that reach the server."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    httpd.hits = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def make_certificate(directory: Path, name: str) -> tuple[Path, Path]:
    """Write a self-signed certificate for DNS name ``name`` only; return (cert, key)."""
    return self_signed(directory, (name,), stem=name)


@pytest.fixture
def tls_server(tmp_path) -> Iterator[tuple[ThreadingHTTPServer, Path, list[str]]]:
    """Serve HTTPS on 127.0.0.1 with a certificate for the name ``localhost`` only.

    Yields the server, the certificate (to trust) and the SNI names clients sent.
    """
    cert, key = make_certificate(tmp_path, "localhost")
    names: list[str] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    httpd.hits = 0  # type: ignore[attr-defined]
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield httpd, cert, names
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def local_url(httpd: ThreadingHTTPServer, host: str = "localhost", scheme: str = "http") -> str:
    return f"{scheme}://{host}:{httpd.server_address[1]}/probe"


@pytest.fixture(autouse=True)
def _localhost_is_loopback() -> None:
    addresses = {i[4][0] for i in socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)}
    if not addresses or any(is_public(a) for a in addresses):
        pytest.fail(f"these tests need localhost to resolve to loopback, got {addresses}")


# ---------------------------------------------------------------------- addresses


@pytest.mark.parametrize("address", NON_PUBLIC)
def test_non_public_addresses(address):
    assert is_public(address) is False


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses(address):
    assert is_public(address) is True


def test_host_is_public_judges_literals_and_localhost_names_only():
    assert host_is_public("[::1]") is False
    assert host_is_public("LOCALHOST.") is False
    assert host_is_public("api.localhost") is False
    assert host_is_public("10.0.0.1") is False
    assert host_is_public("example.com") is True  # judged when connecting
    assert host_is_public("8.8.8.8") is True


# ---------------------------------------------------------------------- check_url


def rules(url: str, **flags: bool) -> str:
    return check_url(url, service="geo", field="endpoint", instance="eu", **flags)


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1:8443",
        "https://localhost",
        "https://api.localhost/x",
        "https://10.1.2.3",
        "https://192.168.0.10",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]:8443",
        "https://[fe80::1]",
        "https://[::ffff:127.0.0.1]",
        "https://[::ffff:a00:1]",
        "https://0.0.0.0",
    ],
)
def test_non_public_hosts_are_refused_unless_allow_private(url):
    with pytest.raises(InvalidOptionsError) as caught:
        rules(url)
    message = str(caught.value)
    assert message.startswith('geo.eu: option "endpoint" points at a non-public host')
    assert "allow_private" in message
    assert url.split("//")[1].split("/")[0].strip("[]") not in message
    assert rules(url, allow_private=True) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "is required"),
        ("   ", "is required"),
        ("ftp://example.com", "must be an https:// URL"),
        ("https://", "must be an https:// URL"),
        ("example.com/path", "must be an https:// URL"),
        ("https://example.com:99999", "is not a valid URL"),
        ("https://example.com:0", "has port 0"),
        ("https://user:s3cr3t-pw@example.com", "must not carry credentials"),
        ("https://example.com/?token=s3cr3t-pw", "must not have a query or a fragment"),
        ("https://example.com/#s3cr3t-pw", "must not have a query or a fragment"),
    ],
)
def test_url_shape_rules(url, reason):
    with pytest.raises(InvalidOptionsError) as caught:
        rules(url, allow_insecure=True, allow_private=True)
    assert str(caught.value) == f'geo.eu: option "endpoint" {reason}'
    assert caught.value.service == "geo" and caught.value.field == "endpoint"
    assert "s3cr3t" not in str(caught.value)


def test_https_only_unless_allow_insecure():
    with pytest.raises(InvalidOptionsError) as caught:
        rules("http://example.com/api")
    assert (
        str(caught.value) == 'geo.eu: option "endpoint" must use https (http needs allow_insecure)'
    )
    assert rules("http://example.com/api", allow_insecure=True) == "http://example.com/api"
    assert rules("  HTTPS://example.com/api  ") == "HTTPS://example.com/api"


@pytest.mark.parametrize(
    ("url", "service", "field", "option", "message"),
    [
        (
            "https://10.0.0.1",
            "flag",
            "remotecfg.endpoint",
            {"private_option": "remotecfg.allow_private"},
            r"need remotecfg\.allow_private$",
        ),
        (
            "http://id.example",
            "auth",
            "oidc.issuer",
            {"insecure_option": "oidc.allow_insecure"},
            r"needs oidc\.allow_insecure\)",
        ),
    ],
)
def test_messages_name_the_battery_options(url, service, field, option, message):
    with pytest.raises(InvalidOptionsError, match=message):
        check_url(url, service=service, field=field, **option)


# ---------------------------------------------------------------------- after DNS


def test_resolve_public_refuses_a_name_resolving_to_loopback():
    with pytest.raises(OutboundBlockedError) as caught:
        resolve_public("localhost", 443, allow_private=False)
    assert "localhost" not in str(caught.value) and "127.0.0.1" not in str(caught.value)
    assert isinstance(caught.value, ConfigurationError)
    assert not isinstance(caught.value, OSError)  # clients neither wrap nor retry it
    infos = resolve_public("localhost", 443, allow_private=True)
    assert infos and all(not is_public(i[4][0]) for i in infos)
    assert len({i[4] for i in infos}) == len(infos)


def test_resolve_public_passes_public_literals_and_refuses_private_literals():
    assert [i[4][0] for i in resolve_public("8.8.8.8", 443, allow_private=False)] == ["8.8.8.8"]
    with pytest.raises(OutboundBlockedError):
        resolve_public("::ffff:127.0.0.1", 443, allow_private=False)


def test_connect_refuses_localhost_before_any_connection(server):
    port = server.server_address[1]
    with pytest.raises(OutboundBlockedError):
        connect(("localhost", port), 2, allow_private=False)
    assert server.hits == 0
    sock = connect(("localhost", port), 2, allow_private=True)
    try:
        assert sock.getpeername()[1] == port
        assert sock.gettimeout() == 2
    finally:
        sock.close()


# ---------------------------------------------------------------------- httpx


def test_httpx_transport_refuses_localhost_after_resolution(server):
    transport = GuardedTransport(allow_private=False, allow_insecure=True)
    with httpx.Client(transport=transport, trust_env=False) as client:
        with pytest.raises(OutboundBlockedError):
            client.get(local_url(server))
        with pytest.raises(OutboundBlockedError):
            client.get(local_url(server, scheme="https"))  # refused before the handshake
    assert server.hits == 0


def test_httpx_transport_allowed_with_allow_private(server):
    transport = GuardedTransport(allow_private=True, allow_insecure=True)
    with httpx.Client(transport=transport, trust_env=False) as client:
        response = client.get(local_url(server))
    assert response.status_code == 200 and response.text == "ok"
    assert server.hits == 1


def test_httpx_transport_refuses_http_unless_allow_insecure(server):
    transport = GuardedTransport(allow_private=True)
    with (
        httpx.Client(transport=transport, trust_env=False) as client,
        pytest.raises(OutboundBlockedError, match="plain http"),
    ):
        client.get(local_url(server, host="127.0.0.1"))
    assert server.hits == 0


def test_httpx_transport_maps_connection_errors():
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]  # nothing listens there
    transport = GuardedTransport(allow_private=True, allow_insecure=True)
    with httpx.Client(transport=transport, trust_env=False) as client:
        with pytest.raises(httpx.ConnectError):
            client.get(f"http://127.0.0.1:{port}/")
        with pytest.raises(httpx.ConnectError):
            client.get("http://no-such-host.invalid/")


def test_async_httpx_transport(server):
    async def fetch(allow_private: bool) -> httpx.Response:
        transport = AsyncGuardedTransport(allow_private=allow_private, allow_insecure=True)
        async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
            return await client.get(local_url(server))

    with pytest.raises(OutboundBlockedError):
        asyncio.run(fetch(False))
    assert server.hits == 0
    assert asyncio.run(fetch(True)).text == "ok"
    assert server.hits == 1


def test_https_connects_by_address_but_verifies_the_host_name(tls_server, tmp_path):
    httpd, cert, names = tls_server
    trusted = ssl.create_default_context(cafile=str(cert))
    url = local_url(httpd, scheme="https")
    with httpx.Client(
        transport=GuardedTransport(allow_private=True, ssl_context=trusted), trust_env=False
    ) as client:
        assert client.get(url).text == "ok"
    with guarded_session(allow_insecure=False, allow_private=True) as session:
        assert session.get(url, timeout=5, verify=str(cert)).text == "ok"
    opener = guarded_opener(allow_insecure=False, allow_private=True, context=trusted)
    with opener.open(url, timeout=5) as response:
        assert response.read() == b"ok"
    assert httpd.hits == 3
    assert names == ["localhost"] * 3  # SNI carries the URL's name, not the address
    other, _ = make_certificate(tmp_path, "other.example")
    wrong = ssl.create_default_context(cafile=str(other))
    with (
        httpx.Client(
            transport=GuardedTransport(allow_private=True, ssl_context=wrong), trust_env=False
        ) as client,
        pytest.raises(httpx.ConnectError),
    ):
        client.get(url)
    assert httpd.hits == 3


# ---------------------------------------------------------------------- requests


def test_requests_session_refuses_localhost_after_resolution(server):
    with (
        guarded_session(allow_insecure=True, allow_private=False) as session,
        pytest.raises(OutboundBlockedError),
    ):
        session.get(local_url(server), timeout=5)
    assert server.hits == 0
    with guarded_session(allow_insecure=True, allow_private=True) as session:
        assert session.get(local_url(server), timeout=5).text == "ok"
    assert server.hits == 1


def test_requests_session_has_no_http_without_allow_insecure(server):
    with guarded_session(allow_insecure=False, allow_private=True) as session:
        with pytest.raises(requests.exceptions.InvalidSchema):
            session.get(local_url(server, host="127.0.0.1"), timeout=5)
        assert session.trust_env is False and session.max_redirects == 0
    assert server.hits == 0


# ---------------------------------------------------------------------- urllib


def test_urllib_opener_refuses_localhost_after_resolution(server):
    opener = guarded_opener(allow_insecure=True, allow_private=False)
    with pytest.raises(OutboundBlockedError):
        opener.open(local_url(server), timeout=5)
    with pytest.raises(OutboundBlockedError, match="plain http"):
        guarded_opener(allow_insecure=False, allow_private=True).open(
            local_url(server, host="127.0.0.1"), timeout=5
        )
    assert server.hits == 0
    allowed = guarded_opener(allow_insecure=True, allow_private=True)
    with allowed.open(local_url(server), timeout=5) as response:
        assert response.read() == b"ok"
    assert server.hits == 1
    with pytest.raises(urllib.error.URLError):  # no file:, ftp: or data: handler
        allowed.open("file:///etc/hostname")


def test_is_blocked_follows_wrapped_errors():
    blocked = OutboundBlockedError("refused")
    wrapped = urllib.error.URLError(blocked)
    try:
        try:
            raise blocked
        except OutboundBlockedError as exc:
            raise RuntimeError("wrapped") from exc
    except RuntimeError as exc:
        chained = exc
    assert is_blocked(blocked) and is_blocked(wrapped) and is_blocked(chained)
    assert not is_blocked(OSError("refused")) and not is_blocked(None)


def test_the_pure_module_imports_no_http_client():
    code = (
        "import sys, toolkit_batteries.core.outbound as o; "
        "print(sorted(m for m in ('httpx', 'httpcore', 'requests', 'urllib3') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
