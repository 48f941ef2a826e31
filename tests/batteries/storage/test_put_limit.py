"""The ``local`` view bounds what one ``PUT`` stores: the link's signed ``max_bytes``, or
``DEFAULT_MAX_PUT_BYTES``; a larger body answers 413 and nothing is stored.

Served by the battery's view on the live WSGI server of ``conftest.py``; the object-store
adapters refuse a bound their SigV4 links cannot carry.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest
from django.test import RequestFactory

from toolkit_batteries.storage import DEFAULT_MAX_PUT_BYTES
from toolkit_batteries.storage import views as storage_views

from .conftest import fetch, make_buckets, open_storage, storage_block, unique


@pytest.fixture
def local(request: pytest.FixtureRequest, tmp_path, settings) -> Iterator[tuple[Any, str]]:
    """Open a ``local`` storage served by the live view; yield it and a bucket name."""
    instance = unique()
    block = storage_block("local", request=request, tmp_path=tmp_path, instance=instance)
    settings.TOOLKIT = {"storage": {instance: block}}
    container, storage = open_storage(block, instance)
    try:
        yield storage, make_buckets("local", request, 1)[0]
    finally:
        container.close()


def _with_query(url: str, **changes: str | None) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    for key, value in changes.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = value
    return urlunsplit(parts._replace(query=urlencode(query)))


def test_a_put_link_stores_up_to_its_signed_bound_and_refuses_more(local):
    storage, name = local
    bucket = storage.bucket(name)
    url = bucket.presign("up/ten.bin", method="PUT", expires=60, max_bytes=10)
    assert "m=10" in url
    assert fetch(url, method="PUT", data=b"x" * 11)[0] == 413
    assert not bucket.exists("up/ten.bin")  # nothing stored, not even a part
    assert fetch(url, method="PUT", data=b"y" * 10)[0] == 201
    assert bucket.get("up/ten.bin") == b"y" * 10
    # A refused upload leaves the object there as it was.
    assert fetch(url, method="PUT", data=b"z" * 4096)[0] == 413
    assert bucket.get("up/ten.bin") == b"y" * 10


def test_the_bound_cannot_be_raised_or_removed(local):
    storage, name = local
    url = storage.bucket(name).presign("up/b.bin", method="PUT", expires=60, max_bytes=10)
    assert fetch(_with_query(url, m="1000000"), method="PUT", data=b"x" * 20)[0] == 403
    assert fetch(_with_query(url, m=None), method="PUT", data=b"x" * 20)[0] == 403
    # A GET link given a bound does not verify either.
    get_url = storage.bucket(name).presign("up/b.bin", expires=60)
    storage.bucket(name).put("up/b.bin", b"data")
    assert fetch(_with_query(get_url, m="10"))[0] == 403
    assert fetch(get_url) == (200, b"data")


def test_links_without_a_bound_get_the_default(local, monkeypatch):
    storage, name = local
    assert DEFAULT_MAX_PUT_BYTES == 100 * 1024 * 1024
    monkeypatch.setattr(storage_views, "DEFAULT_MAX_PUT_BYTES", 16)
    url = storage.bucket(name).presign("up/d.bin", method="PUT", expires=60)
    assert "m=" not in url
    assert fetch(url, method="PUT", data=b"x" * 17)[0] == 413
    assert fetch(url, method="PUT", data=b"x" * 16)[0] == 201


def test_a_body_longer_than_its_header_is_cut_at_the_bound(local):
    """Counted while reading, not only on Content-Length (a server may not cap the stream)."""
    storage, name = local
    request = RequestFactory().put("/x", data=b"", content_type="application/octet-stream")
    request.META["CONTENT_LENGTH"] = "4"  # claims 4 bytes...
    request._stream = io.BytesIO(b"w" * 64)  # ...and streams 64
    response = storage_views._put(storage.bucket(name), "lied.bin", request, 8)
    assert response.status_code == 413
    assert not storage.bucket(name).exists("lied.bin")


def test_max_bytes_is_for_put_links_and_positive(local):
    storage, name = local
    bucket = storage.bucket(name)
    with pytest.raises(ValueError, match="PUT"):
        bucket.presign("a.bin", max_bytes=10)
    with pytest.raises(ValueError, match="at least 1"):
        bucket.presign("a.bin", method="PUT", max_bytes=0)


@pytest.mark.parametrize("variant", ["objstore", "objstore_b"])
def test_object_stores_refuse_a_bound_they_cannot_sign(request, tmp_path, variant):
    instance = unique()
    block = storage_block(variant, request=request, tmp_path=tmp_path, instance=instance)
    container, storage = open_storage(block, instance)
    try:
        bucket = storage.bucket(make_buckets(variant, request, 1)[0])
        assert "X-Amz-Signature" in bucket.presign("a.bin", method="PUT", expires=60)
        with pytest.raises(ValueError, match="cannot bound a PUT"):
            bucket.presign("a.bin", method="PUT", expires=60, max_bytes=10)
    finally:
        container.close()
