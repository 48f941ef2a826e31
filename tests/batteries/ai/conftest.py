"""Open the ai battery the real way (configuration, then a Container) on every adapter.

Each adapter talks to its provider's fake (:mod:`.server`) on 127.0.0.1, so the tests
set ``allow_insecure`` and ``allow_private``; the SSRF tests leave ``allow_private`` off.
Keys are random per test, so a scan of the captured logs can look for them.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .server import FAKES, FakeProvider

ADAPTERS = ("llm_a", "llm_b", "llm_c", "llm_d")
#: The model each adapter is configured with (llm_d has no default).
MODELS = {
    "llm_a": "claude-test-1",
    "llm_b": "gpt-test-1",
    "llm_c": "gemini-test-1",
    "llm_d": "compatible/test-1",
}


@dataclass
class Opened:
    adapter: str
    ai: Any
    container: Container
    server: FakeProvider
    key: str
    #: The retry waits the policy asked for, in order (recorded, not slept).
    waits: list[float] = field(default_factory=list)


def new_key(adapter: str) -> str:
    return f"key-{adapter}-{secrets.token_hex(12)}"


def block(adapter: str, server: FakeProvider, key: str, **options: Any) -> dict[str, Any]:
    return {
        "adapter": adapter,
        "options": {
            "api_key": key,
            "base_url": server.url,
            "model": MODELS[adapter],
            "allow_insecure": True,
            "allow_private": True,
            "timeout": "5s",
            **options,
        },
    }


def open_ai(adapter: str, server: FakeProvider, key: str, **options: Any) -> tuple[Any, Container]:
    container = Container(Config.load({"ai": block(adapter, server, key, **options)}, {}))
    ai = container.ai()
    ai.configure(sleep=lambda seconds: None)  # retries without waiting
    return ai, container


@pytest.fixture(params=ADAPTERS)
def opened(request: pytest.FixtureRequest) -> Iterator[Opened]:
    adapter = request.param
    key = new_key(adapter)
    server = FAKES[adapter](key).start()
    ai, container = open_ai(adapter, server, key)
    found = Opened(adapter, ai, container, server, key)
    ai.configure(sleep=found.waits.append)
    try:
        yield found
    finally:
        container.close()
        server.stop()
