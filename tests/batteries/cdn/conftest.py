"""Open the cdn battery the real way (configuration, then a Container) on every adapter.

``noop`` discards purges and counts them; ``cdn_a`` talks to
:class:`~tests.batteries.cdn.server.PurgeServer`, the provider's purge API on 127.0.0.1,
with ``allow_private`` and ``allow_insecure`` set for the test only.
"""

from __future__ import annotations

import secrets as random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .server import PurgeServer

VARIANTS = ("noop", "cdn_a")

#: A token and a zone id in the provider's formats; tests scan output for the token.
TOKEN = "cftok-" + random.token_urlsafe(30)
ZONE_ID = random.token_hex(16)


@pytest.fixture
def server() -> Iterator[PurgeServer]:
    with PurgeServer(TOKEN, ZONE_ID) as running:
        yield running


def provider_block(server: PurgeServer, **options: Any) -> dict:
    """Return the envelope of a cdn_a instance on ``server`` (test-only allowances)."""
    return {
        "adapter": "cdn_a",
        "options": {
            "api_token": TOKEN,
            "zone_id": ZONE_ID,
            "base_url": server.url,
            "allow_insecure": True,
            "allow_private": True,
            **options,
        },
    }


def open_cdn(block: dict) -> Container:
    return Container(Config.load({"cdn": block}, {}))


@dataclass
class Opened:
    """An opened cdn service and what reached its destination."""

    variant: str
    cdn: Any
    container: Container
    server: PurgeServer | None

    def purged(self, kind: str) -> list[str] | int:
        """``cdn_a``: the items the server purged; ``noop``: how many were discarded."""
        if self.server is None:
            return self.cdn.discarded["urls" if kind == "files" else "tags"]
        return self.server.purged(kind)


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    server = None
    if request.param == "noop":
        block: dict = {"adapter": "noop"}
    else:
        server = request.getfixturevalue("server")
        block = provider_block(server)
    container = open_cdn(block)
    try:
        yield Opened(request.param, container.cdn(), container, server)
    finally:
        container.close()
