"""Errors, refusals at open, the serving view's answers, and no secret in any log line."""

from __future__ import annotations

import logging
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    ToolkitError,
    UnknownFieldError,
    http_status,
)
from toolkit_batteries.media import (
    ImageTooLargeError,
    MediaDurationError,
    MediaError,
    MediaFetchError,
    MediaNotFoundError,
    MediaTimeoutError,
    MediaTooLargeError,
    MediaToolError,
    UnsupportedMediaError,
)

from .conftest import ACCESS_KEY, SECRET_KEY, fetch, image_bytes, open_media

EXPECTED_CODES = {
    MediaError: ("invalid_argument", 400),
    MediaTooLargeError: ("payload_too_large", 413),
    ImageTooLargeError: ("payload_too_large", 413),
    UnsupportedMediaError: ("unsupported_media_type", 415),
    MediaDurationError: ("invalid_argument", 400),
    MediaNotFoundError: ("not_found", 404),
    MediaFetchError: ("invalid_argument", 400),
    MediaToolError: ("internal", 500),
    MediaTimeoutError: ("deadline_exceeded", 504),
}


def test_error_codes_are_stable():
    for cls, (code, status) in EXPECTED_CODES.items():
        assert issubclass(cls, MediaError) and issubclass(cls, ToolkitError)
        assert cls.code == code and http_status(cls.code) == status
    assert issubclass(MediaNotFoundError, FileNotFoundError)


def _open(block, instance="default"):
    return Container(Config.load({"media": {instance: block}}, {})).media(instance)


def test_objstore_needs_a_valid_bucket():
    with pytest.raises(InvalidOptionsError) as caught:
        _open({"adapter": "objstore"})
    assert caught.value.service == "media" and caught.value.field == "bucket"
    with pytest.raises(InvalidOptionsError, match='"bucket"'):
        _open({"adapter": "objstore", "options": {"bucket": "Bad_Name"}})


def test_endpoint_outbound_rules_at_open(moto_endpoint):
    base = {"bucket": "pics", "access_key_id": ACCESS_KEY, "secret_access_key": SECRET_KEY}
    with pytest.raises(InvalidOptionsError) as caught:
        _open({"adapter": "objstore", "options": {**base, "endpoint": moto_endpoint}})
    assert caught.value.service == "media" and caught.value.field == "endpoint"
    assert "127.0.0.1" not in str(caught.value)
    lifted = {**base, "endpoint": moto_endpoint, "allow_insecure": True}
    with pytest.raises(InvalidOptionsError) as caught:
        _open({"adapter": "objstore", "options": lifted})
    assert "allow_private" in str(caught.value) and "127.0.0.1" not in str(caught.value)


def test_unknown_option_is_strict():
    with pytest.raises(UnknownFieldError, match='did you mean "max_pixels"'):
        Config.load({"media": {"adapter": "local", "options": {"max_pixel": 5}}}, {})


def _raw(url: str, method: str) -> int:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_serving_view_answers(request, tmp_path, caplog):
    opened = open_media(request, "local", tmp_path)
    media = opened.media
    raw = image_bytes((30, 30), "PNG")
    media.put_image("v/p.png", raw)
    url = media.url("v/p.png")
    signature = parse_qs(urlsplit(url).query)["s"][0]
    assert fetch(url) == (200, raw)
    assert _raw(url, "HEAD") == 200
    assert _raw(url, "POST") == 405 and _raw(url, "DELETE") == 405
    assert fetch(url.replace("s=", "s=x"))[0] == 403  # a forged signature
    assert fetch(url.replace("v/p.png", "v/q.png"))[0] == 403  # another key, same signature
    assert fetch(url.split("?")[0])[0] == 403  # unsigned
    base = url.split("/v/p.png")[0]
    assert fetch(f"{base}/v/%2e%2e/%2e%2e/etc/passwd")[0] == 400
    gone = media.url("v/gone.png")
    assert fetch(gone)[0] == 404  # valid link, missing object
    other = base.replace(opened.instance, "nosuchinstance")
    assert fetch(f"{other}/v/p.png?{urlsplit(url).query}")[0] == 404
    with caplog.at_level(logging.DEBUG):
        fetch(url.replace("s=", "s=x"))
    assert any("answered 403" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        assert signature not in record.getMessage() and signature not in str(record.__dict__)


@pytest.mark.parametrize("variant", ["local", "objstore"])
def test_no_secret_in_logs_or_reprs(request, tmp_path, settings, caplog, variant, clip):
    """A full cycle at DEBUG: no secret key or presign signature in any log line."""
    with caplog.at_level(logging.DEBUG):
        opened = open_media(request, variant, tmp_path)
        media = opened.media
        media.put_image("s/p.jpg", image_bytes((100, 100), "JPEG"))
        thumb = media.thumbnail("s/p.jpg", 20, 20)
        media.put_video("s/clip.mp4", clip)
        media.poster("s/clip.mp4")
        signatures = []
        for key in ("s/p.jpg", thumb):
            url = media.url(key)
            query = parse_qs(urlsplit(url).query)
            signatures += query.get("s", []) + query.get("X-Amz-Signature", [])
            assert fetch(url)[0] == 200
        with pytest.raises(MediaNotFoundError):
            media.get("s/missing.jpg")
        shown = [
            repr(media),
            repr(media.store),
            repr(opened.container),
            str(Config.load({"media": {opened.instance: opened.block}}, {}).redacted_services()),
        ]
    assert signatures
    lines = [r.getMessage() for r in caplog.records] + [str(r.__dict__) for r in caplog.records]
    for secret in [SECRET_KEY, *signatures]:
        for line in lines + shown:
            assert secret not in line
