"""One contract for every storage adapter: the same calls give the same answers.

Runs against ``local`` (files under a temporary root, served by the battery's view on a
live server), ``objstore`` and ``objstore_b`` (moto's S3 server mode on 127.0.0.1).
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import Storage as DjangoStorage
from django.core.files.storage import storages

from toolkit_batteries.storage import InvalidKeyError, Storage

from .conftest import fetch

BAD_KEYS = [
    "../escape.txt",
    "a/../../escape.txt",
    "a/..",
    "./a",
    "/etc/passwd",
    "/abs/key",
    "a\\b",
    "..\\escape",
    "a\x00b",
    "a//b",
    "",
    "C:/windows",
    "a\nb",
    "x" * 1100,
]


class TestStorageContract:
    """The same calls, the same answers, on every adapter."""

    def test_identity(self, opened):
        storage = opened.storage
        assert isinstance(storage, DjangoStorage) and isinstance(storage, Storage)
        assert storage.adapter_name == opened.variant
        assert storage.service_name == "storage" and storage.instance == opened.instance
        assert opened.container.storage(opened.instance) is storage
        # A script's container (no STORAGES alias of this instance) builds the class with
        # Django's constructor and holds it itself: nothing is registered at run time.
        assert opened.instance not in storages.backends
        assert not [alias for alias, s in storages._storages.items() if s is storage]

    def test_put_get_overwrite_delete(self, opened):
        bucket = opened.storage.bucket(opened.buckets[0])
        assert isinstance(bucket, DjangoStorage) and bucket.bucket_name == opened.buckets[0]
        assert bucket.put("dir/hello.txt", b"hello") == "dir/hello.txt"
        assert bucket.get("dir/hello.txt") == b"hello"
        assert bucket.exists("dir/hello.txt") and bucket.size("dir/hello.txt") == 5
        bucket.put("dir/hello.txt", "ünï")  # put replaces, exactly at the key
        assert bucket.get("dir/hello.txt") == "ünï".encode()
        bucket.delete("dir/hello.txt")
        assert not bucket.exists("dir/hello.txt")
        with pytest.raises(FileNotFoundError):
            bucket.get("dir/hello.txt")

    def test_put_file_object_and_binary(self, opened):
        bucket = opened.storage.bucket(opened.buckets[0])
        payload = bytes(range(256)) * 4096  # 1 MiB of every byte value
        bucket.put("blob.bin", ContentFile(payload))
        assert bucket.get("blob.bin") == payload

    def test_buckets_are_separate(self, opened):
        first, second = (opened.storage.bucket(name) for name in opened.buckets)
        first.put("same.txt", b"one")
        second.put("same.txt", b"two")
        assert first.get("same.txt") == b"one" and second.get("same.txt") == b"two"
        assert opened.storage.bucket(opened.buckets[0]) is first  # views are reused

    def test_django_save_never_overwrites(self, opened):
        bucket = opened.storage.bucket(opened.buckets[0])
        first = bucket.save("docs/report.txt", ContentFile(b"v1"))
        second = bucket.save("docs/report.txt", ContentFile(b"v2"))
        assert first == "docs/report.txt" and second != first
        assert second.startswith("docs/report") and second.endswith(".txt")
        with bucket.open(first) as handle:
            assert handle.read() == b"v1"
        with bucket.open(second) as handle:
            assert handle.read() == b"v2"
        directories, files = bucket.listdir("docs")
        assert sorted(files) == sorted(name.split("/")[1] for name in (first, second))
        assert directories == []

    def test_presigned_get_over_http(self, opened):
        bucket = opened.storage.bucket(opened.buckets[0])
        bucket.put("photo.png", b"\x89PNG-bytes")
        status, body = fetch(bucket.presign("photo.png", expires=60))
        assert (status, body) == (200, b"\x89PNG-bytes")
        assert fetch(bucket.url("photo.png")) == (200, b"\x89PNG-bytes")

    def test_presigned_put_over_http(self, opened):
        bucket = opened.storage.bucket(opened.buckets[0])
        url = bucket.presign("up/file.bin", method="PUT", expires=60)
        status, _ = fetch(url, method="PUT", data=b"uploaded through a presigned URL")
        assert status in (200, 201)
        assert bucket.get("up/file.bin") == b"uploaded through a presigned URL"

    def test_presign_expiry(self, opened):
        bucket = opened.storage.bucket(opened.buckets[0])
        bucket.put("brief.txt", b"short-lived")
        url = bucket.presign("brief.txt", expires=1)
        if opened.variant == "local":
            assert fetch(url) == (200, b"short-lived")
            time.sleep(2.1)
            status, _ = fetch(url)
            assert status == 403
        else:
            # The store enforces S3 expiry; moto does not, so check the signed terms.
            query = parse_qs(urlsplit(url).query)
            assert query["X-Amz-Expires"] == ["1"]
            signed_at = time.strptime(query["X-Amz-Date"][0], "%Y%m%dT%H%M%SZ")
            assert abs(time.mktime(signed_at) - time.mktime(time.gmtime())) < 60
            assert "x-amz-signature" in {k.lower() for k in query}
        with pytest.raises(ValueError):
            bucket.presign("brief.txt", expires=0)
        with pytest.raises(ValueError):
            bucket.presign("brief.txt", expires=8 * 24 * 3600)
        with pytest.raises(ValueError):
            bucket.presign("brief.txt", method="DELETE")

    @pytest.mark.parametrize("key", BAD_KEYS, ids=lambda k: repr(k)[:20])
    def test_bad_keys_refused_everywhere(self, opened, key):
        bucket = opened.storage.bucket(opened.buckets[0])
        bucket.put("inside.txt", b"safe")
        calls = [
            lambda: bucket.put(key, b"x"),
            lambda: bucket.get(key),
            lambda: bucket.exists(key),
            lambda: bucket.delete(key),
            lambda: bucket.size(key),
            lambda: bucket.save(key, ContentFile(b"x")),
            lambda: bucket.open(key),
            lambda: bucket.url(key),
            lambda: bucket.presign(key),
            lambda: bucket.presign(key, method="PUT"),
            lambda: bucket.get_modified_time(key),
        ]
        for call in calls:
            with pytest.raises(InvalidKeyError):
                call()
        assert bucket.get("inside.txt") == b"safe"

    def test_bad_bucket_names_refused(self, opened):
        for name in ("..", "a", "UPPER", "a/b", "-lead", "x" * 64, "a..b", "", "a\x00b"):
            with pytest.raises(InvalidKeyError):
                opened.storage.bucket(name)

    def test_listdir_refuses_traversal(self, opened):
        bucket = opened.storage.bucket(opened.buckets[0])
        for prefix in ("../", "/abs", "a\\b"):
            with pytest.raises(InvalidKeyError):
                bucket.listdir(prefix)
        bucket.put("top.txt", b"1")
        assert "top.txt" in bucket.listdir("")[1]
