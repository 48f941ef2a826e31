"""What only the ``remote`` adapter has: the wire format, the outbound rules, its errors."""

from __future__ import annotations

import logging
import socket

import pytest

from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError
from toolkit_batteries.document import (
    DocumentTimeoutError,
    DocumentTooLargeError,
    RenderFailedError,
)

from .conftest import html_source, open_document, pdf_pages, pdf_text, remote_block
from .server import RenderServer

API_KEY = "rk_live_9f8e7d6c5b4a-do-not-log"


def test_the_request_follows_the_wire_format(server: RenderServer) -> None:
    container, document = open_document(remote_block(server, api_key=API_KEY))
    try:
        pdf = document.pdf(html_source(["Über café"]), assets={"img/a.png": b"PNGDATA"})
    finally:
        container.close()
    assert pdf_pages(pdf) == 1 and "Über café" in pdf_text(pdf)
    [received] = server.received
    assert (received.method, received.path) == ("POST", "/forms/chromium/convert/html")
    assert received.header("Authorization") == f"Bearer {API_KEY}"
    assert received.header("Accept") == "application/pdf"
    assert received.header("Content-Type").startswith("multipart/form-data; boundary=")
    assert set(received.files) == {"index.html", "img/a.png"}
    assert "Über café" in received.files["index.html"].decode("utf-8")
    assert received.files["img/a.png"] == b"PNGDATA"


def test_no_authorization_header_without_api_key(server: RenderServer) -> None:
    container, document = open_document(remote_block(server))
    try:
        document.pdf(html_source(["x"]))
    finally:
        container.close()
    assert server.received[0].header("Authorization") is None


def test_ping_reads_the_health_route(server: RenderServer) -> None:
    container, document = open_document(remote_block(server))
    try:
        document.ping()
    finally:
        container.close()
    assert [(r.method, r.path) for r in server.received] == [("GET", "/health")]


def test_an_http_endpoint_needs_allow_insecure(server: RenderServer) -> None:
    block = remote_block(server)
    del block["options"]["allow_insecure"]
    with pytest.raises(InvalidOptionsError, match='option "endpoint" must use https'):
        open_document(block)
    assert server.received == []


def test_a_loopback_endpoint_needs_allow_private(server: RenderServer) -> None:
    block = remote_block(server)
    del block["options"]["allow_private"]
    with pytest.raises(InvalidOptionsError) as caught:
        open_document(block)
    assert "allow_private" in str(caught.value) and "127.0.0.1" not in str(caught.value)
    assert server.received == []


def test_a_name_resolving_to_loopback_is_refused_at_connect_time(
    server: RenderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name passes the literal check; its resolved address does not, so nothing is sent."""
    real = socket.getaddrinfo
    name = "render.example.test"

    def fake_dns(host, *args, **kwargs):
        return real("127.0.0.1" if host == name else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    block = remote_block(server, endpoint=f"http://{name}:{server.port}")
    del block["options"]["allow_private"]
    container, document = open_document(block)
    try:
        with pytest.raises(InvalidOptionsError, match="set allow_private") as caught:
            document.pdf(html_source(["x"]))
        with pytest.raises(InvalidOptionsError):
            document.ping()
    finally:
        container.close()
    assert name not in str(caught.value)
    assert server.received == []
    # The same name with allow_private reaches the server: the refusal was the rule.
    container, document = open_document(
        remote_block(server, endpoint=f"http://{name}:{server.port}")
    )
    try:
        assert pdf_pages(document.pdf(html_source(["x"]))) == 1
    finally:
        container.close()
    assert len(server.received) == 1


@pytest.mark.parametrize(
    "endpoint",
    ["", "ftp://render.example.com", "https://user:pw@render.example.com", "https://h/x?q=1"],
)
def test_bad_endpoints_are_refused_at_open(endpoint: str) -> None:
    with pytest.raises(InvalidOptionsError, match=r'document\.default: option "endpoint"'):
        open_document({"adapter": "remote", "options": {"endpoint": endpoint}})


def test_an_error_status_is_a_render_failure(server: RenderServer) -> None:
    server.status, server.body = 503, b"secret internal detail"
    container, document = open_document(remote_block(server))
    try:
        with pytest.raises(RenderFailedError, match="answered 503") as caught:
            document.pdf(html_source(["x"]))
        with pytest.raises(RenderFailedError):
            document.images(html_source(["x"]))
    finally:
        container.close()
    assert "secret internal detail" not in str(caught.value)


def test_an_answer_that_is_not_a_pdf_is_refused(server: RenderServer) -> None:
    server.body = b"<html>login page</html>"
    container, document = open_document(remote_block(server))
    try:
        with pytest.raises(RenderFailedError, match="did not answer a PDF"):
            document.pdf(html_source(["x"]))
    finally:
        container.close()


def test_an_oversized_answer_is_refused(server: RenderServer) -> None:
    server.body = b"%PDF-1.7\n" + b"0" * 200_000
    container, document = open_document(remote_block(server, max_output_bytes=100_000))
    try:
        with pytest.raises(DocumentTooLargeError, match="max_output_bytes"):
            document.pdf(html_source(["x"]))
    finally:
        container.close()


def test_a_slow_service_times_out(server: RenderServer) -> None:
    server.delay = 3
    container, document = open_document(remote_block(server, timeout="0.5s"))
    try:
        with pytest.raises(DocumentTimeoutError, match="within timeout"):
            document.pdf(html_source(["x"]))
    finally:
        container.close()


def test_an_unreachable_service_is_unavailable() -> None:
    from tests.ports import free_port

    block = {
        "adapter": "remote",
        "options": {
            "endpoint": f"http://127.0.0.1:{free_port()}",
            "allow_insecure": True,
            "allow_private": True,
        },
    }
    container, document = open_document(block)
    try:
        with pytest.raises(ServiceUnavailableError, match="unreachable"):
            document.pdf(html_source(["x"]))
        with pytest.raises(ServiceUnavailableError):
            document.ping()
    finally:
        container.close()


def test_the_api_key_never_shows(server: RenderServer, caplog: pytest.LogCaptureFixture) -> None:
    server.status = 500
    with caplog.at_level(logging.DEBUG):
        container, document = open_document(remote_block(server, api_key=API_KEY))
        try:
            with pytest.raises(RenderFailedError) as caught:
                document.pdf(html_source(["x"]))
            shown = [repr(document), str(caught.value), repr(container)]
        finally:
            container.close()
    messages = [r.getMessage() for r in caplog.records]
    assert any("document.default: allow_private is on" in m for m in messages)
    assert any("document.default: allow_insecure is on" in m for m in messages)
    for text in [*shown, caplog.text, *(r.getMessage() for r in caplog.records)]:
        assert API_KEY not in text
