"""The answers the ``local`` storage and media views share (``storage/answers.py``).

Both views go through these, so a file's headers, a missing object's 404 and the order of
the first checks are asserted once here, on the pieces themselves.
"""

from __future__ import annotations

import logging

import pytest
from django.test import RequestFactory

from toolkit_batteries.storage.answers import file_answer, log_error_answer, resolve


def test_a_stored_file_is_answered_typed_and_sandboxed(tmp_path) -> None:
    path = tmp_path / "page.html"
    path.write_bytes(b"<script>alert(1)</script>")
    response = file_answer(str(path), "docs/page.html")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"
    assert b"".join(response.streaming_content) == b"<script>alert(1)</script>"
    response.close()


@pytest.mark.parametrize("where", ["missing.bin", "folder", "plain.txt/under"])
def test_what_is_not_a_file_answers_404(tmp_path, where: str) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "plain.txt").write_bytes(b"x")
    assert file_answer(str(tmp_path / where), where).status_code == 404


def test_resolve_checks_method_then_instance_then_key() -> None:
    factory = RequestFactory()
    store = object()
    bad = "../escape"
    refused = resolve(factory.post("/x"), bad, ("GET", "HEAD"), lambda: None)
    assert refused.status_code == 405 and refused["Allow"] == "GET, HEAD"
    assert resolve(factory.get("/x"), bad, ("GET",), lambda: None).status_code == 404
    assert resolve(factory.get("/x"), bad, ("GET",), lambda: store).status_code == 400
    assert resolve(factory.get("/x"), "a/b.txt", ("GET",), lambda: store) == (store, "a/b.txt")


def test_an_error_answer_is_logged_without_the_query(caplog) -> None:
    request = RequestFactory().get("/media/a.txt", {"e": "1", "t": "2", "s": "signature"})
    response = file_answer("/nonexistent/a.txt", "a.txt")
    with caplog.at_level(logging.WARNING, logger="toolkit.test"):
        log_error_answer(logging.getLogger("toolkit.test"), "storage", "x", request, response)
    assert caplog.messages == ["storage.x: GET /media/a.txt answered 404"]
    assert "signature" not in caplog.text
    assert response._has_been_logged is True
