"""Open the secrets battery the real way (configuration, then a Container) on every adapter.

``env`` reads the process environment (values put with ``monkeypatch``); ``secretstore``
talks to :class:`~tests.batteries.secrets.server.KVServer`, a KV v2 server started on
127.0.0.1 for the test, with ``allow_private`` and ``allow_insecure`` set for the test
only.
"""

from __future__ import annotations

import secrets as random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .server import KVServer

VARIANTS = ("env", "secretstore")


@pytest.fixture
def server() -> Iterator[KVServer]:
    with KVServer() as running:
        yield running


def store_block(server: KVServer, token: str, **options: Any) -> dict:
    """Return the envelope of a secretstore instance on ``server`` (test-only allowances)."""
    return {
        "adapter": "secretstore",
        "options": {
            "addr": server.url,
            "token": token,
            "allow_insecure": True,
            "allow_private": True,
            **options,
        },
    }


def new_token(server: KVServer, **kwargs: Any) -> str:
    token = "hvs." + random.token_urlsafe(24)
    server.add_token(token, **kwargs)
    return token


@dataclass
class Opened:
    """An opened secrets service, its container, and a way to place a secret natively."""

    variant: str
    secrets: Any
    container: Container
    monkeypatch: pytest.MonkeyPatch
    server: KVServer | None
    prefix: str

    def put(self, name: str, value: str) -> None:
        """Store ``value`` as secret ``name`` the backend's own way (not through the battery)."""
        if self.server is None:
            self.monkeypatch.setenv(f"{self.prefix}_{name}", value)
        else:
            self.server.put(f"{self.prefix}/{name}", {"value": value})


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Opened]:
    prefix = "TKT" + random.token_hex(4).upper()
    server = None
    if request.param == "env":
        block: dict = {"adapter": "env", "options": {"prefix": prefix}}
    else:
        server = request.getfixturevalue("server")
        block = store_block(server, new_token(server), prefix=prefix)
    container = Container(Config.load({"secrets": block}, {}))
    try:
        yield Opened(request.param, container.secrets(), container, monkeypatch, server, prefix)
    finally:
        container.close()
