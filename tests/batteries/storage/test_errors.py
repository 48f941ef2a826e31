"""Errors name services and fields, never values; outbound rules; no secret in any log line."""

from __future__ import annotations

import logging
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import (
    InvalidOptionsError,
    ServiceUnavailableError,
)
from toolkit_batteries.storage.adapters.endpoint import check_endpoint

from .conftest import (
    ACCESS_KEY,
    SECRET_KEY,
    URL_SECRET,
    fetch,
    make_buckets,
    open_storage,
    storage_block,
    unique,
)


def rules(url, *, insecure=False, private=False, resolve=None):
    kwargs = {"resolve": resolve} if resolve else {}
    return check_endpoint(
        url,
        field="endpoint",
        instance="default",
        allow_insecure=insecure,
        allow_private=private,
        **kwargs,
    )


def fixed(*addresses):
    def resolve(host, port):
        return [(2, 1, 6, "", (address, port)) for address in addresses]

    return resolve


class TestEndpointRules:
    def test_https_public_passes(self):
        assert rules("https://store.example/", resolve=fixed("93.184.216.34")) == (
            "https://store.example"
        )

    def test_http_needs_allow_insecure(self):
        with pytest.raises(InvalidOptionsError, match="allow_insecure"):
            rules("http://store.example", resolve=fixed("93.184.216.34"))
        assert rules("http://store.example", insecure=True, resolve=fixed("93.184.216.34"))

    @pytest.mark.parametrize(
        "address",
        [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.9",
            "169.254.169.254",
            "::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "0.0.0.0",
        ],
    )
    def test_private_addresses_refused_after_resolution(self, address):
        with pytest.raises(InvalidOptionsError, match="allow_private") as caught:
            rules("https://innocent.example", resolve=fixed("93.184.216.34", address))
        assert "innocent" not in str(caught.value)
        assert rules("https://innocent.example", private=True, resolve=fixed(address))

    def test_real_resolution_of_localhost(self):
        with pytest.raises(InvalidOptionsError, match="allow_private"):
            rules("https://localhost:9000")

    def test_unresolvable_host_is_unavailable(self):
        def fail(host, port):
            raise OSError("no such host")

        with pytest.raises(ServiceUnavailableError):
            rules("https://nowhere.example", resolve=fail)

    @pytest.mark.parametrize(
        "url",
        [
            "ftp://x.example",
            "https://user:pw@x.example",
            "https://x.example/?a=1",
            "https://x.example/#f",
            "not a url",
            "https://",
        ],
    )
    def test_malformed(self, url):
        with pytest.raises(InvalidOptionsError) as caught:
            rules(url, insecure=True, private=True)
        assert "pw" not in str(caught.value) and 'option "endpoint"' in str(caught.value)


def test_open_refuses_loopback_endpoint_without_allow_private(request, tmp_path):
    block = storage_block("objstore", request=request, tmp_path=tmp_path, instance=unique())
    block["options"]["allow_private"] = False
    with pytest.raises(InvalidOptionsError) as caught:
        open_storage(block, unique())
    assert "127.0.0.1" not in str(caught.value) and SECRET_KEY not in str(caught.value)


def test_objstore_b_needs_account_id(request, tmp_path):
    block = storage_block("objstore_b", request=request, tmp_path=tmp_path, instance=unique())
    del block["options"]["endpoint"]
    block["options"]["account_id"] = ""
    with pytest.raises(InvalidOptionsError, match="account_id"):
        open_storage(block, unique())
    block["options"]["account_id"] = "evil.host/x"
    with pytest.raises(InvalidOptionsError, match="account_id") as caught:
        open_storage(block, unique())
    assert "evil" not in str(caught.value)


def test_objstore_b_default_endpoint_and_region(request, tmp_path):
    from toolkit_batteries.storage.adapters.r2 import R2Storage

    storage = R2Storage(
        instance="b", account_id="abc123", access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY
    )
    assert storage.endpoint_url == "https://abc123.r2.cloudflarestorage.com"
    assert storage.region_name == "auto"
    url = storage.bucket("pics").presign("a.png")
    assert url.startswith("https://abc123.r2.cloudflarestorage.com/pics/a.png?")
    assert "auto/s3/aws4_request" in parse_qs(urlsplit(url).query)["X-Amz-Credential"][0]


def test_unknown_option_in_storages_entry_is_strict():
    from toolkit_batteries.storage.adapters.local import LocalStorage

    with pytest.raises(Exception, match='unknown option "rot"'):
        LocalStorage(instance="x", rot="/tmp")


@pytest.mark.parametrize("variant", ["local", "objstore", "objstore_b"])
def test_no_secret_in_logs_or_reprs(request, tmp_path, settings, caplog, variant):
    """A full cycle at DEBUG: no key, password or presign signature in any log line."""
    instance = unique()
    (bucket,) = make_buckets(variant, request, 1)
    block = storage_block(
        variant,
        request=request,
        tmp_path=tmp_path,
        instance=instance,
        policy={"missing-" + unique(): {"read": {"public": True}}, bucket: {}},
        policy_sync="auto",
        sync_fail="warn",
    )
    settings.TOOLKIT = {"storage": {instance: block}}
    signatures = []
    with caplog.at_level(logging.DEBUG):
        container, storage = open_storage(block, instance)
        view = storage.bucket(bucket)
        view.put("k.txt", b"v")
        for expires in (60, 1):
            url = view.presign("k.txt", expires=expires)
            query = parse_qs(urlsplit(url).query)
            signatures += query.get("s", []) + query.get("X-Amz-Signature", [])
            assert fetch(url)[0] == 200
        if variant == "local":
            time.sleep(2.1)
            assert fetch(url)[0] == 403
            gone = view.presign("k.txt", expires=60)
            signatures += parse_qs(urlsplit(gone).query)["s"]
            view.delete("k.txt")
            assert fetch(gone)[0] == 404  # a valid link to a missing object
        shown = [
            repr(storage),
            repr(view),
            repr(container),
            str(Config.load({"storage": {instance: block}}, {}).redacted_services()),
        ]
        container.close()
    assert signatures
    secrets = [SECRET_KEY, URL_SECRET, *signatures]
    lines = [record.getMessage() for record in caplog.records] + [
        str(record.__dict__) for record in caplog.records
    ]
    if variant != "local":  # local has nothing to push; the object stores warn
        assert any("could not be pushed" in line for line in lines)
    for secret in secrets:
        for line in lines + shown:
            assert secret not in line
    assert ACCESS_KEY  # an identifier, not a secret: allowed to appear


@pytest.mark.parametrize("variant", ["local", "objstore", "objstore_b"])
def test_migration_form_has_no_secret(request, tmp_path, variant):
    """A FileField(storage=...) writes deconstruct() into migrations: no secret there."""
    from django.db.migrations.writer import MigrationWriter

    block = storage_block(variant, request=request, tmp_path=tmp_path, instance=unique())
    container, storage = open_storage(block, unique())
    view = storage.bucket("pics")
    text, _ = MigrationWriter.serialize(view)
    assert SECRET_KEY not in text and URL_SECRET not in text
    assert "'pics'" in text or '"pics"' in text
    _path, args, kwargs = view.deconstruct()
    rebuilt = type(view)(*args, **kwargs)
    assert rebuilt.bucket_name == "pics" and rebuilt.instance == view.instance
    container.close()
