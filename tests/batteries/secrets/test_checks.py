"""The secrets battery's app and system checks."""

from __future__ import annotations

import pytest
from django.core import checks

from tests.support.checks import assert_checks, battery_messages

SECRET = "hunter2-secret-token"
STORE = {"adapter": "secretstore", "options": {"addr": "https://secrets.example.com"}}


def secrets_messages() -> list[checks.CheckMessage]:
    return battery_messages("toolkit_secrets")


def store(**options: object) -> dict:
    return {"adapter": "vault", "options": {**STORE["options"], "token": SECRET, **options}}


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({}, []),
        ({"options": {"prefix": "MY_APP"}}, []),
        ({"options": {"prefix": "my-app"}}, ["toolkit_secrets.E002"]),
        ({"options": {"prefix": "9LIVES"}}, ["toolkit_secrets.E002"]),
        (store(), []),
        (store(prefix="apps/web"), []),
        (store(prefix="a//b"), ["toolkit_secrets.E002"]),
        (store(addr=""), ["toolkit_secrets.E003"]),
        (store(addr="http://secrets.example.com"), ["toolkit_secrets.E003"]),
        (store(addr="http://secrets.example.com", allow_insecure=True), []),
        (store(addr=f"https://u:{SECRET}@secrets.example.com"), ["toolkit_secrets.E003"]),
        (store(addr="https://10.0.0.8:8200"), ["toolkit_secrets.E003"]),
        (store(addr="https://10.0.0.8:8200", allow_private=True), []),
        (store(mount="../x"), ["toolkit_secrets.E003"]),
        (STORE, ["toolkit_secrets.E004"]),
        ({**STORE, "options": {**STORE["options"], "token_file": "/run/token"}}, []),
        ({"options": {"region": "eu-west-1"}}, ["toolkit_secrets.W001"]),
        (store(project_id="p1", region="r"), ["toolkit_secrets.W001"] * 2),
        ({"adapter": "memory"}, ["toolkit_secrets.E001"]),
    ],
)
def test_checks(block: dict, expected: list[str]) -> None:
    assert_checks("secrets", block, expected, secret=SECRET)
