"""Open the flag battery the real way (configuration, then a Container) on every adapter.

``static`` reads a JSON file written from :data:`FLAGS`; ``remotecfg`` fetches the same
flags, translated to a server template (:func:`.server.template_of`), from a
:class:`.server.FakeRemoteConfig` on 127.0.0.1 (so the tests set ``allow_insecure`` and
``allow_private``), with a :class:`FakeClock` for its TTL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import serving
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from ..cache.helpers import FakeClock
from .server import FakeRemoteConfig, template_of

VARIANTS = ("static", "remotecfg")

#: The contract's flags, in the static file's format.
FLAGS: dict[str, Any] = {
    "on": True,
    "off": {"enabled": False},
    "theme": {"value": "dark", "tenants": {"acme": {"value": "light"}}},
    "limit": 5,
    "rollout": {"rollout": 25, "tenants": {"acme": True, "globex": False}},
}


@dataclass
class Opened:
    variant: str
    flag: Any
    container: Container
    server: FakeRemoteConfig | None


@pytest.fixture
def remote() -> Iterator[FakeRemoteConfig]:
    yield from serving(FakeRemoteConfig(template_of(FLAGS)))


def remote_block(server: FakeRemoteConfig, directory: Path, **options: Any) -> dict[str, Any]:
    account = server.write_account(directory)
    return {
        "adapter": "remotecfg",
        "options": {
            "remotecfg": {
                "service_account": str(account),
                "endpoint": server.url,
                "allow_insecure": True,
                "allow_private": True,
                "timeout": "2s",
                **options,
            }
        },
    }


def static_block(path: Path, **options: Any) -> dict[str, Any]:
    return {"adapter": "static", "options": {"static": {"path": str(path), **options}}}


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opened]:
    server = None
    if request.param == "static":
        path = tmp_path / "flags.json"
        path.write_text(json.dumps({"flags": FLAGS}), encoding="utf-8")
        block = static_block(path)
    else:
        server = request.getfixturevalue("remote")
        block = remote_block(server, tmp_path)
    container = Container(Config.load({"flag": block}, {}))
    flag = container.flag()
    if server is not None:
        flag.clock = FakeClock()
    try:
        yield Opened(request.param, flag, container, server)
    finally:
        container.close()
