"""The battery's system checks: presence of credentials, files, URLs and timeout; no values."""

from __future__ import annotations

import os

from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config

from .servers import ACCOUNT_SID, AUTH_TOKEN


def ids(block):
    found = service_checks("notification", Config.load({"notification": block}, {}))
    return sorted(m.id for m in found), " ".join(m.msg for m in found)


def test_the_log_default_has_nothing_to_report():
    assert ids({"adapter": "log"}) == ([], "")


def test_sms_without_credentials_is_an_error():
    found, text = ids({"adapter": "sms"})
    assert found == ["toolkit_notification.E002"] * 3
    for field in ("sms.account_sid", "sms.auth_token", "sms.from_number"):
        assert field in text


def test_a_bad_from_number_is_an_error_that_does_not_echo_it():
    block = {
        "adapter": "sms",
        "options": {
            "sms": {"account_sid": ACCOUNT_SID, "auth_token": AUTH_TOKEN, "from_number": "555-0199"}
        },
    }
    found, text = ids(block)
    assert found == ["toolkit_notification.E002"]
    assert "E.164" in text and "555-0199" not in text and AUTH_TOKEN not in text


def test_an_http_or_loopback_endpoint_is_an_error():
    sms = {"account_sid": ACCOUNT_SID, "auth_token": AUTH_TOKEN, "from_number": "+15005550006"}
    found, text = ids(
        {"adapter": "sms", "options": {"sms": {**sms, "endpoint": "http://127.0.0.1:9"}}}
    )
    assert found == ["toolkit_notification.E004"] and "sms.endpoint" in text
    relaxed = {"allow_insecure": True, "allow_private": True}
    block = {"adapter": "sms", "options": {"sms": {**sms, "endpoint": "http://127.0.0.1:9"}}}
    block["options"].update(relaxed)
    assert ids(block) == ([], "")


def test_push_key_file_missing_or_too_open(tmp_path):
    found, text = ids({"adapter": "push"})
    assert found == ["toolkit_notification.E003"] and "push.service_account" in text
    missing = {"adapter": "push", "options": {"push": {"service_account": str(tmp_path / "x")}}}
    assert ids(missing)[0] == ["toolkit_notification.E003"]
    path = tmp_path / "account.json"
    path.write_text("{}")
    os.chmod(path, 0o644)
    block = {"adapter": "push", "options": {"push": {"service_account": str(path)}}}
    assert ids(block)[0] == ["toolkit_notification.W001"]
    os.chmod(path, 0o600)
    assert ids(block) == ([], "")


def test_a_negative_timeout_is_an_error(tmp_path):
    path = tmp_path / "account.json"
    path.write_text("{}")
    os.chmod(path, 0o600)
    block = {
        "adapter": "push",
        "options": {"timeout": "-1s", "push": {"service_account": str(path)}},
    }
    assert ids(block)[0] == ["toolkit_notification.E005"]
