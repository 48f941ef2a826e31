"""The storage battery's system checks (nothing connects)."""

from __future__ import annotations

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config


def ids(block, settings=None):
    return sorted(m.id for m in service_checks("storage", Config.load({"storage": block}, {})))


def test_clean_configurations_pass(tmp_path):
    assert ids({"adapter": "local", "options": {"root": str(tmp_path)}}) == []
    assert ids({"adapter": "s3", "options": {"access_key_id": "a", "secret_access_key": "b"}}) == []
    assert ids({"adapter": "r2", "options": {"account_id": "abc123"}}) == []


def test_local_without_root(settings):
    settings.MEDIA_ROOT = ""
    assert ids({"adapter": "local"}) == ["toolkit_storage.W003"]
    settings.MEDIA_ROOT = "/srv/media"
    assert ids({"adapter": "local"}) == []


def test_endpoint_rules():
    block = {"adapter": "objstore", "options": {"endpoint": "http://store.example"}}
    messages = service_checks("storage", Config.load({"storage": block}, {}))
    assert [m.id for m in messages] == ["toolkit_storage.E002"]
    assert "store.example" not in messages[0].msg
    block["options"]["allow_insecure"] = True
    assert ids(block) == []


def test_objstore_b_account():
    assert ids({"adapter": "objstore_b"}) == ["toolkit_storage.E003"]
    assert ids({"adapter": "objstore_b", "options": {"account_id": "a.b"}}) == [
        "toolkit_storage.E003"
    ]
    assert ids({"adapter": "objstore_b", "options": {"endpoint": "https://x.example"}}) == []


def test_policy_version(tmp_path):
    block = {
        "adapter": "local",
        "options": {"root": str(tmp_path), "policy": {"pics": {"version": "7"}}},
    }
    assert ids(block) == ["toolkit_storage.E004"]


def test_half_credentials_and_sync_warnings(tmp_path):
    assert ids({"adapter": "s3", "options": {"access_key_id": "a"}}) == ["toolkit_storage.W001"]
    local = {"root": str(tmp_path)}
    assert ids({"adapter": "local", "options": {**local, "sync_fail": "require"}}) == [
        "toolkit_storage.W002"
    ]
    assert ids({"adapter": "local", "options": {**local, "policy_sync": "auto"}}) == [
        "toolkit_storage.W002"
    ]
