"""``fetch_image``: downloads through the outbound guard, bounded by ``max_download_bytes``.

The remote site is a local HTTP server started by the test on 127.0.0.1, which records
every request it receives, so a refused fetch is shown to have sent nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.processes import serve_in_thread
from toolkit_batteries.core.errors import http_status
from toolkit_batteries.media import MediaFetchError, MediaTooLargeError, UnsupportedMediaError

from .conftest import VARIANTS, image_bytes, noise_bytes, open_media

PICTURE = image_bytes((160, 120), "JPEG")
BIG = noise_bytes((300, 300), "PNG")


class Site(BaseHTTPRequestHandler):
    received: list[str] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.received.append(self.path)
        path = self.path.split("?")[0]
        if path == "/pic.jpg":
            self._answer(200, PICTURE)
        elif path == "/big.png":
            self._answer(200, BIG)
        elif path == "/big-unannounced.png":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(BIG)
        elif path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/pic.jpg")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/text":
            self._answer(200, b"<html>not an image</html>")
        else:
            self._answer(404, b"missing")

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    server.daemon_threads = True
    yield from serve_in_thread(server)


@pytest.fixture(params=VARIANTS)
def lifted(request, tmp_path):
    """Open a media instance allowed to fetch from the local (private, http) site."""
    return open_media(
        request,
        request.param,
        tmp_path,
        allow_private=True,
        allow_insecure=True,
        max_download_bytes=50_000,
    )


def test_fetch_stores_the_image(site, lifted):
    info = lifted.media.fetch_image(f"{site}/pic.jpg?token=abc", "remote/pic.jpg")
    assert (info.format, info.width, info.height) == ("JPEG", 160, 120)
    assert lifted.media.get("remote/pic.jpg") == PICTURE


def test_fetch_is_bounded(site, lifted):
    assert len(BIG) > 50_000
    for path in ("/big.png", "/big-unannounced.png"):
        with pytest.raises(MediaTooLargeError) as caught:
            lifted.media.fetch_image(f"{site}{path}", "remote/big.png")
        assert http_status(caught.value.code) == 413
    assert not lifted.media.exists("remote/big.png")


def test_fetch_failures_name_no_url(site, lifted):
    cases = {
        "/missing": MediaFetchError,
        "/redirect": MediaFetchError,  # redirects are never followed
        "/text": UnsupportedMediaError,
    }
    for path, error in cases.items():
        with pytest.raises(error) as caught:
            lifted.media.fetch_image(f"{site}{path}?secret-token=s3cr3t", "remote/x.jpg")
        assert "s3cr3t" not in str(caught.value) and "127.0.0.1" not in str(caught.value)
    for url in ("ftp://example.com/x.png", "file:///etc/passwd", "http://user:pw@example.com/x"):
        with pytest.raises(MediaFetchError):
            lifted.media.fetch_image(url, "remote/x.jpg")
    assert not lifted.media.exists("remote/x.jpg")


def test_private_and_insecure_targets_refused_by_default(request, tmp_path, site):
    strict = open_media(request, "local", tmp_path)
    before = len(Site.received)
    with pytest.raises(MediaFetchError) as caught:
        strict.media.fetch_image(f"{site}/pic.jpg", "remote/pic.jpg")
    assert "allow_insecure" in str(caught.value)
    https_only = open_media(request, "local", tmp_path, allow_insecure=True)
    for host in (site, site.replace("127.0.0.1", "localhost")):
        with pytest.raises(MediaFetchError) as caught:
            https_only.media.fetch_image(f"{host}/pic.jpg", "remote/pic.jpg")
        assert "allow_private" in str(caught.value)
    assert len(Site.received) == before, "the site received no request"
    assert not strict.media.exists("remote/pic.jpg")
