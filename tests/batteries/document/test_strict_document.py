"""The Gotenberg stand-in refuses what Gotenberg refuses, and the remote adapter's form passes.

Malformed forms go raw (urllib) so the server's refusal is what is tested; nothing here
renders except the one adapter call at the end.
"""

from __future__ import annotations

import urllib.error
import urllib.request
import uuid

import pytest

from .conftest import html_source, open_document, remote_block
from .server import CONVERT, RenderServer


def multipart(parts: list[tuple[str, str | None, bytes]]) -> tuple[bytes, str]:
    """Encode ``(field, file name, data)`` parts; return ``(body, content type)``."""
    boundary = uuid.uuid4().hex
    chunks = []
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        chunks.append(
            f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + data + b"\r\n"
        )
    body = b"".join(chunks) + f"--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def post(
    server: RenderServer, body: bytes, content_type: str, path: str = CONVERT, method="POST"
) -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        server.url + path, data=body, method=method, headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers["Content-Type"], refused.read()


INDEX = ("files", "index.html", b"<p>x</p>")


@pytest.mark.parametrize(
    ("parts", "kind", "status", "words"),
    [
        ([INDEX], "application/json", 400, b"multipart/form-data"),
        ([INDEX], "multipart/form-data", 400, b"multipart/form-data"),
        ([("files", "page.html", b"<p>x</p>")], None, 400, b"'index.html' is required"),
        ([("index.html", None, b"<p>x</p>")], None, 400, b"'index.html' is required"),
        ([INDEX, ("landscape", None, b"yes")], None, 400, b"'landscape' is invalid"),
        ([INDEX, ("scale", None, b"3")], None, 400, b"'scale' is invalid"),
        ([INDEX, ("paperWidth", None, b"A4")], None, 400, b"'paperWidth' is invalid"),
    ],
    ids=[
        "json", "no-boundary", "no-index", "index-as-field", "landscape-word", "scale-3",
        "paper-name",
    ],
)  # fmt: skip
def test_malformed_forms_are_refused(parts, kind, status, words):
    body, content_type = multipart(parts)
    with RenderServer() as server:
        got, answered, text = post(server, body, kind or content_type)
    assert got == status and answered.startswith("text/plain") and words in text


def test_other_methods_and_routes_are_refused():
    body, content_type = multipart([INDEX])
    with RenderServer() as server:
        assert post(server, body, content_type, method="PUT")[0] == 405
        assert post(server, body, content_type, path="/forms/chromium/convert/url")[0] == 404
        assert post(server, b"", content_type, path="/health")[0] == 405


def test_well_typed_fields_are_taken_and_the_adapter_passes():
    body, content_type = multipart(
        [INDEX, ("landscape", None, b"true"), ("scale", None, b"1.5"), ("marginTop", None, b"1cm")]
    )
    with RenderServer() as server:
        got, answered, pdf = post(server, body, content_type)
        assert got == 200 and answered == "application/pdf" and pdf.startswith(b"%PDF")
        container, document = open_document(remote_block(server))
        try:
            assert document.pdf(html_source(["x"]), assets={"a.png": b"PNG"}).startswith(b"%PDF")
        finally:
            container.close()
        assert [r.status for r in server.received] == [200, 200]
