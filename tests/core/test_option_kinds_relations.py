"""The second round of option kinds: files, programs, key rings, relations between fields.

Each battery check moved onto its options keeps its ID and its message; these tests pin
the messages as ``manage.py check`` prints them (through ``service_checks``, the public
path), and that none carries a value.
"""

from __future__ import annotations

import base64
import dataclasses
import os
from pathlib import Path

import pytest

from toolkit_batteries.core import option_kinds as kinds
from toolkit_batteries.core.checks import service_checks
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.option_kinds import RuleContext

SECRET = "pw-hunter2-value"


def _messages(service: str, block: dict, environ: dict | None = None) -> list:
    return service_checks(service, Config.load({service: block}, environ or {}))


@dataclasses.dataclass
class _Options:
    a: str = ""
    b: str = ""


def _context(options: object = None) -> RuleContext:
    return RuleContext("svc", "main", "a", options if options is not None else _Options())


def test_file_exists_tells_missing_from_absent(tmp_path: Path) -> None:
    present = tmp_path / "key.json"
    present.write_text("{}")
    rule = kinds.file_exists("x.E1", missing="is required")
    assert rule.test(str(present), _context(), "f") is None
    assert rule.test("", _context(), "f") == "is required"
    assert rule.test(str(tmp_path / "nope"), _context(), "f") == "names a file that does not exist"
    assert kinds.file_exists("x.E1").test("", _context(), "f") is None
    assert kinds.file_exists("x.E1").test(str(tmp_path), _context(), "f") is not None  # a dir


def test_private_file_warns_only_for_a_file_others_can_read(tmp_path: Path) -> None:
    key = tmp_path / "sa.json"
    key.write_text("{}")
    rule = kinds.private_file("x.W1")
    os.chmod(key, 0o600)
    assert rule.test(str(key), _context(), "f") is None
    os.chmod(key, 0o640)
    assert rule.test(str(key), _context(), "f") == "is readable by group or others"
    assert rule.test(str(tmp_path / "missing"), _context(), "f") is None
    assert rule.warning


def test_program_looks_on_path_and_at_paths_without_running(tmp_path: Path) -> None:
    tool = tmp_path / "mytool"
    tool.write_text("#!/bin/sh\nexit 0\n")
    rule = kinds.program("x.E1")
    assert rule.test("", _context(), "block.sh") is None  # the field's name: sh is on PATH
    assert rule.test("no-such-program-xyz", _context(), "f") == "names a program not on PATH"
    assert rule.test(str(tool), _context(), "f") is not None  # not executable
    os.chmod(tool, 0o700)
    assert rule.test(str(tool), _context(), "f") is None
    command = kinds.program("x.E1", "sh", command=True)
    assert command.test("sh -c 'exit 0'", _context(), "f") is None
    assert command.test("sh 'unclosed", _context(), "f") is not None


def test_keyring_reports_the_parsers_text_never_the_key() -> None:
    rule = kinds.keyring("x.E1", "toolkit_batteries.crypto.base:parse_keyring", 32)
    good = base64.b64encode(os.urandom(32)).decode()
    assert rule.test(good, _context(), "key") is None
    reason = rule.test("a:" + SECRET, _context(), "key")
    assert reason is not None and '"key"' in reason and SECRET not in reason
    assert (
        kinds.keyring(
            "x.E1", "toolkit_batteries.crypto.base:parse_keyring", 64, skip_empty=True
        ).test("  ", _context(), "sign_key")
        is None
    )


def test_relation_and_when_see_the_whole_options() -> None:
    rule = kinds.relation("x.E1", lambda o: None if o.a or not o.b else '"b" needs "a"')
    assert rule.test(_Options(b="1"), _context(), "") == '"b" needs "a"'
    assert rule.test(_Options(a="1", b="1"), _context(), "") is None
    gated = kinds.relation("x.E1", lambda o: "x", when=lambda o: bool(o.a), adapters=("a",))
    assert not gated.applies("a", _Options())
    assert gated.applies("a", _Options(a="1")) and not gated.applies("b", _Options(a="1"))


def test_moved_battery_checks_keep_their_messages(tmp_path: Path) -> None:
    smtp = {"adapter": "smtp", "options": {"password": SECRET, "encryption": "none"}}
    assert [(m.id, m.msg) for m in _messages("mailer", smtp)] == [
        (
            "toolkit_mailer.E002",
            'mailer.default: option "username" is empty while "password" is set',
        ),
        (
            "toolkit_mailer.W001",
            'mailer.default: the SMTP password is sent unencrypted (option "encryption")',
        ),
    ]
    push = {"adapter": "push", "options": {"push": {"service_account": ""}}}
    (e003,) = [m for m in _messages("notification", push) if m.id == "toolkit_notification.E003"]
    assert e003.msg == 'notification.default: option "push.service_account" is required'
    key = tmp_path / "sa.json"
    key.write_text("{}")
    os.chmod(key, 0o644)
    remote = {"adapter": "remotecfg", "options": {"remotecfg": {"service_account": str(key)}}}
    (w001,) = [m for m in _messages("flag", remote) if m.id == "toolkit_flag.W001"]
    assert w001.msg == (
        'flag.default: the file of option "remotecfg.service_account" is readable by group or '
        "others"
    )
    media = {"adapter": "local", "options": {"ffmpeg": "no-such-ffmpeg-xyz"}}
    assert [m.msg for m in _messages("media", media)] == [
        'media.default: the binary of option "ffmpeg" is not found'
    ]
    rbac = {"adapter": "rbac", "options": {"model_path": str(key)}}
    assert [(m.id, m.msg) for m in _messages("permission", rbac)] == [
        (
            "toolkit_permission.W001",
            'permission.default: option "model_path" is set but the "rbac" adapter ignores it',
        ),
        (
            "toolkit_permission.W002",
            'permission.default: the rbac adapter has no "rules": every check is denied',
        ),
    ]
    tenant = {"adapter": "single", "options": {"id": "a", "allowed": ["b"]}}
    assert [m.msg for m in _messages("tenant", tenant)] == [
        'tenant.default: option "id" is not one of "allowed"'
    ]
    lock = {"adapter": "memory", "options": {"ttl": "1s", "retry_interval": "2s"}}
    assert [m.msg for m in _messages("lock", lock)] == [
        'lock.default: option "retry_interval" is not shorter than "ttl"'
    ]
    stdout = {
        "adapter": "stdout",
        "options": {"endpoint": "https://c.example", "headers": {"a": "b"}},
    }
    assert [m.msg for m in _messages("observability", stdout)] == [
        'observability.default: option(s) "endpoint", "headers" have no effect with the stdout '
        "adapter"
    ]


def test_moved_key_checks_name_the_instance_in_hints_and_no_value() -> None:
    found = _messages("auth", {"staging": {"adapter": "jwt"}})
    (w001,) = [m for m in found if m.msg.startswith("auth.staging:")]
    assert w001.id == "toolkit_auth.W001" and "AUTH__STAGING__JWT_SECRET" in w001.hint
    (e002,) = _messages("crypto", {"adapter": "local", "options": {"key": "k1:" + SECRET}})
    assert e002.id == "toolkit_crypto.E002" and '"key"' in e002.msg and SECRET not in e002.msg


@pytest.mark.parametrize("service", ["flag", "notification", "media", "mailer", "tenant", "lock"])
def test_a_battery_whose_checks_are_all_declared_has_no_checks_module(service: str) -> None:
    assert not (
        Path(__file__).resolve().parents[2] / "toolkit_batteries" / service / "checks.py"
    ).exists()
