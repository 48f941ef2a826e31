"""Open the geo battery the real way (configuration, then a Container) on every adapter.

``static`` reads :data:`.servers.PLACES` from a JSON file under a temporary ``BASE_DIR``;
``geo_a`` and ``geo_b`` ask :class:`.servers.FakeGeoA` / :class:`.servers.FakeGeoB` on
127.0.0.1 for the same places (so they set ``allow_insecure`` and ``allow_private``).
``geo_b``'s one-request-per-second budget runs on a :class:`FakeClock` whose sleep moves
it, so the contract costs no real waiting.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.geo.adapters import nominatim

from ..cache.helpers import FakeClock
from .servers import KEY, PLACES, FakeGeoA, FakeGeoB

VARIANTS = ("static", "geo_a", "geo_b")
AGENT = "toolkit-tests/1.0 (geo@example.com)"


@dataclass
class Opened:
    variant: str
    geo: Any
    container: Container
    server: FakeGeoA | FakeGeoB | None


class SleepingClock(FakeClock):
    """A fake clock; :meth:`sleep` moves it and remembers each wait."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.advance(seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SleepingClock:
    """Run geo_b's budget on a fake clock (the adapter reads its clock at open)."""
    fake = SleepingClock()
    monkeypatch.setattr(nominatim, "_clock", fake)
    monkeypatch.setattr(nominatim, "_sleep", fake.sleep)
    return fake


def http_options(server: FakeGeoA | FakeGeoB, **options: Any) -> dict[str, Any]:
    field = "base_url" if isinstance(server, FakeGeoA) else "endpoint"
    return {
        field: server.url(),
        "allow_insecure": True,
        "allow_private": True,
        "timeout": "5s",
        **options,
    }


def geo_a_block(server: FakeGeoA, **options: Any) -> dict[str, Any]:
    return {"adapter": "geo_a", "options": http_options(server, api_key=KEY, **options)}


def geo_b_block(server: FakeGeoB, **options: Any) -> dict[str, Any]:
    return {"adapter": "geo_b", "options": http_options(server, **{"user_agent": AGENT, **options})}


def open_geo(block: dict[str, Any], **services: Any) -> tuple[Any, Container]:
    container = Container(Config.load({"geo": {"default": block}, **services}, {}))
    return container.geo(), container


@pytest.fixture(params=VARIANTS)
def opened(
    request: pytest.FixtureRequest, tmp_path: Path, settings: Any, clock: SleepingClock
) -> Iterator[Opened]:
    variant = request.param
    if variant == "static":
        settings.BASE_DIR = tmp_path
        (tmp_path / "places.json").write_text(json.dumps({"places": PLACES}))
        geo, container = open_geo({"adapter": "static", "options": {"path": "places.json"}})
        with container:
            yield Opened(variant, geo, container, None)
        return
    server: FakeGeoA | FakeGeoB
    if variant == "geo_a":
        server = FakeGeoA()
        block = geo_a_block(server)
    else:
        server = FakeGeoB(AGENT, clock=clock)
        block = geo_b_block(server)
    with server:
        geo, container = open_geo(block)
        with container:
            yield Opened(variant, geo, container, server)
