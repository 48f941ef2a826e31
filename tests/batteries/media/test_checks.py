"""The media battery's system checks (nothing connects)."""

from __future__ import annotations

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config


def ids(block):
    return sorted(m.id for m in service_checks("media", Config.load({"media": block}, {})))


def test_clean_configurations_pass(tmp_path):
    assert ids({"adapter": "local", "options": {"root": str(tmp_path)}}) == []
    assert ids({"adapter": "local"}) == []  # root defaults to /tmp/media
    assert ids({"adapter": "s3", "options": {"bucket": "pics"}}) == []
    keys = {"access_key_id": "a", "secret_access_key": "b", "bucket": "pics"}
    assert ids({"adapter": "objstore", "options": keys}) == []


def test_objstore_bucket():
    assert ids({"adapter": "objstore"}) == ["toolkit_media.E002"]
    assert ids({"adapter": "objstore", "options": {"bucket": "Not_A_Bucket"}}) == [
        "toolkit_media.E002"
    ]


def test_endpoint_rules():
    block = {"adapter": "objstore", "options": {"bucket": "pics", "endpoint": "http://s.example"}}
    messages = service_checks("media", Config.load({"media": block}, {}))
    assert [m.id for m in messages] == ["toolkit_media.E003"]
    assert "s.example" not in messages[0].msg and "endpoint" in messages[0].msg
    block["options"]["allow_insecure"] = True
    assert ids(block) == []
    block["options"]["endpoint"] = "https://user:pw@s.example"
    assert ids(block) == ["toolkit_media.E003"]


def test_missing_binaries_warn(tmp_path):
    options = {"root": str(tmp_path), "ffmpeg": "/nonexistent/ffmpeg", "ffprobe": "no-such-probe"}
    messages = service_checks(
        "media", Config.load({"media": {"adapter": "local", "options": options}}, {})
    )
    assert [m.id for m in messages] == ["toolkit_media.W001", "toolkit_media.W001"]
    assert "/nonexistent" not in messages[0].msg and '"ffmpeg"' in messages[0].msg


def test_half_credentials_warn():
    block = {"adapter": "objstore", "options": {"bucket": "pics", "access_key_id": "a"}}
    assert ids(block) == ["toolkit_media.W002"]
    secret = "topsecret-access-key-0123456789"
    block = {"adapter": "objstore", "options": {"bucket": "pics", "secret_access_key": secret}}
    messages = service_checks("media", Config.load({"media": block}, {}))
    assert [m.id for m in messages] == ["toolkit_media.W002"]
    assert secret not in messages[0].msg and secret not in str(messages[0].hint)


def test_manage_py_check_runs_the_battery_checks(settings):
    from django.core import checks

    settings.TOOLKIT = {
        "media": {
            "default": {"adapter": "local"},
            "pics": {"adapter": "s3"},
            "odd": {"adapter": "no-such-adapter"},
        }
    }
    found = sorted(m.id for m in checks.run_checks() if m.id and m.id.startswith("toolkit_media."))
    assert found == ["toolkit_media.E001", "toolkit_media.E002"]
