"""Open the notification battery the real way (configuration, then a Container) on every adapter.

``log`` writes to the ``toolkit.notification`` logger; ``sms`` talks to a
:class:`.servers.FakeSMSProvider` and ``push`` to a :class:`.servers.FakePushService`, both
on 127.0.0.1, so their blocks set ``allow_insecure`` and ``allow_private`` (tests of the
outbound rules leave them off).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .servers import ACCOUNT_SID, AUTH_TOKEN, FROM_NUMBER, FakePushService, FakeSMSProvider

VARIANTS = ("log", "sms", "push")
PHONE = "+14155550123"
DEVICE = "fcm-device-token:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"


@pytest.fixture
def sms_server() -> Iterator[FakeSMSProvider]:
    with FakeSMSProvider() as server:
        yield server


@pytest.fixture
def push_server() -> Iterator[FakePushService]:
    with FakePushService() as server:
        yield server


def sms_block(server: Any, *, relaxed: bool = True, **sms: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "timeout": "5s",
        "sms": {
            "account_sid": ACCOUNT_SID,
            "auth_token": AUTH_TOKEN,
            "from_number": FROM_NUMBER,
            "endpoint": server.url,
            **sms,
        },
    }
    if relaxed:
        options.update(allow_insecure=True, allow_private=True)
    return {"adapter": "sms", "options": options}


def push_block(
    server: FakePushService, directory: Path, *, relaxed: bool = True, **push: Any
) -> dict[str, Any]:
    account = push.pop("service_account", None) or str(server.write_account(directory))
    options: dict[str, Any] = {
        "timeout": "5s",
        "push": {"service_account": account, "endpoint": server.url, **push},
    }
    if relaxed:
        options.update(allow_insecure=True, allow_private=True)
    return {"adapter": "push", "options": options}


def open_block(block: dict[str, Any]) -> tuple[Container, Any]:
    container = Container(Config.load({"notification": block}, {}))
    return container, container.notification()


@dataclass
class Opened:
    """An opened adapter, a valid recipient for it, and a way to read what was delivered."""

    variant: str
    notification: Any
    container: Container
    to: str
    #: Return the delivered messages as ``{"to", "body", "title", "data"}`` dicts.
    delivered: Callable[[], list[dict[str, Any]]]


@pytest.fixture(params=VARIANTS)
def opened(
    request: pytest.FixtureRequest, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> Iterator[Opened]:
    caplog.set_level(logging.INFO, logger="toolkit.notification")
    variant = request.param
    if variant == "log":
        container, notification = open_block(
            {"adapter": "log", "options": {"log": {"recipient": "full", "body": "full"}}}
        )

        def delivered() -> list[dict[str, Any]]:
            return [
                {"to": r.to, "body": r.body, "title": r.title, "data": r.data}
                for r in caplog.records
                if r.name == "toolkit.notification" and hasattr(r, "notification_id")
            ]

        to = PHONE
    elif variant == "sms":
        server = request.getfixturevalue("sms_server")
        container, notification = open_block(sms_block(server))

        def delivered() -> list[dict[str, Any]]:
            out = []
            for seen in server.seen:
                if seen.path.endswith("/Messages.json"):
                    form = {k: v[0] for k, v in seen.form().items()}
                    title, _, body = form["Body"].rpartition("\n")
                    out.append({"to": form["To"], "body": body, "title": title, "data": {}})
            return out

        to = PHONE
    else:
        server = request.getfixturevalue("push_server")
        container, notification = open_block(push_block(server, tmp_path))

        def delivered() -> list[dict[str, Any]]:
            out = []
            for seen in server.seen:
                if seen.path.endswith("messages:send"):
                    message = seen.json()["message"]
                    note = message.get("notification", {})
                    out.append(
                        {
                            "to": message.get("token") or f"topic:{message.get('topic')}",
                            "body": note.get("body"),
                            "title": note.get("title", ""),
                            "data": message.get("data", {}),
                        }
                    )
            return out

        to = DEVICE
    try:
        yield Opened(variant, notification, container, to, delivered)
    finally:
        container.close()
