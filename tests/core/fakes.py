"""Adapters defined for the container tests, configured by dotted path.

Each records what happens to it in :data:`EVENTS` as ``(event, service, instance)``, so a
test can assert open and close order without looking inside the container.
"""

from __future__ import annotations

import sys
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

import pytest

from toolkit_batteries.core import catalog, loading
from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.core.groups import KVServerConnection

EVENTS: list[tuple[str, str, str]] = []
_counts: dict[str, int] = {}
_counts_lock = threading.Lock()
#: Set by tests to let a blocked close() finish (so no thread outlives the test run).
RELEASE = threading.Event()


def count(key: str) -> int:
    """Increment and return a named counter."""
    with _counts_lock:
        _counts[key] = _counts.get(key, 0) + 1
        return _counts[key]


def reset() -> None:
    """Forget every recorded event and counter."""
    EVENTS.clear()
    _counts.clear()
    RELEASE.clear()


def config(**blocks: Any) -> Config:
    """Return a configuration from ``TOOLKIT``-style blocks and an empty environment."""
    return Config.load(blocks, {})


def path(name: str) -> str:
    """Return the dotted path of a class in this module."""
    return f"{__name__}.{name}"


class RecordingAdapter:
    """Records open and close; keeps the context for inspection."""

    def __init__(self, ctx: OpenContext) -> None:
        self.ctx = ctx
        self.closed = 0

    @classmethod
    def open(cls, ctx: OpenContext) -> RecordingAdapter:
        """Open and record."""
        EVENTS.append(("open", ctx.service, ctx.instance))
        return cls(ctx)

    def close(self) -> None:
        """Close and record."""
        self.closed += 1
        EVENTS.append(("close", self.ctx.service, self.ctx.instance))


class NoCloseAdapter:
    """Has no close method at all (like crypto or password)."""

    @classmethod
    def open(cls, ctx: OpenContext) -> NoCloseAdapter:
        """Open and record."""
        EVENTS.append(("open", ctx.service, ctx.instance))
        return cls()


class FlakyAdapter(RecordingAdapter):
    """Fails its first open of each (service, instance), then works."""

    @classmethod
    def open(cls, ctx: OpenContext) -> RecordingAdapter:
        """Fail the first time."""
        if count(f"flaky:{ctx.service}.{ctx.instance}") == 1:
            raise ServiceUnavailableError(ctx.service, "first attempt fails", instance=ctx.instance)
        return super().open(ctx)


class SlowOpenAdapter(RecordingAdapter):
    """Takes a while to open, so concurrent callers overlap."""

    @classmethod
    def open(cls, ctx: OpenContext) -> RecordingAdapter:
        """Count, then sleep."""
        count(f"slow-open:{ctx.service}")
        time.sleep(0.2)
        return super().open(ctx)


class NeedsDBAdapter(RecordingAdapter):
    """Opens ``db`` (its dependency) inside its own open."""

    @classmethod
    def open(cls, ctx: OpenContext) -> RecordingAdapter:
        """Open the dependency first."""
        ctx.container.db()
        return super().open(ctx)


class NeedsCacheAndDBAdapter(RecordingAdapter):
    """Depends on cache (which depends on db)."""

    @classmethod
    def open(cls, ctx: OpenContext) -> RecordingAdapter:
        """Open both dependencies first."""
        ctx.container.cache()
        ctx.container.db()
        return super().open(ctx)


class CycleAdapter(RecordingAdapter):
    """Asks for the queue, whose adapter asks for this service again."""

    @classmethod
    def open(cls, ctx: OpenContext) -> RecordingAdapter:
        """Recurse into the other service."""
        other = "queue" if ctx.service == "cache" else "cache"
        getattr(ctx.container, other)()
        return super().open(ctx)


class SharedThing:
    """One object handed out for several services; must be closed once."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        """Count closes."""
        self.closed += 1
        EVENTS.append(("close", "shared", "-"))


SHARED = SharedThing()


class SharedAdapter:
    """Returns the module's one :data:`SHARED` object for every service and instance."""

    @classmethod
    def open(cls, ctx: OpenContext) -> SharedThing:
        """Hand out the shared object."""
        EVENTS.append(("open", ctx.service, ctx.instance))
        return SHARED


class HangingCloseAdapter(RecordingAdapter):
    """Its close blocks until :data:`RELEASE` is set (or 10 s pass)."""

    def close(self) -> None:
        """Block."""
        EVENTS.append(("close-start", self.ctx.service, self.ctx.instance))
        RELEASE.wait(10)


class PanicCloseAdapter(RecordingAdapter):
    """Its close crashes with an unexpected exception."""

    def close(self) -> None:
        """Crash."""
        EVENTS.append(("close", self.ctx.service, self.ctx.instance))
        raise RuntimeError("boom")


class ToolkitErrorCloseAdapter(RecordingAdapter):
    """Its close fails with a toolkit error, which the container keeps as is."""

    def close(self) -> None:
        """Fail politely."""
        EVENTS.append(("close", self.ctx.service, self.ctx.instance))
        raise ServiceUnavailableError(self.ctx.service, "gone", instance=self.ctx.instance)


class PoolUsingAdapter(RecordingAdapter):
    """Borrows the shared Redis client and uses it again while closing."""

    @classmethod
    def open(cls, ctx: OpenContext) -> RecordingAdapter:
        """Borrow the client of the Redis named by the ``dsn`` option."""
        adapter = super().open(ctx)
        adapter.client = ctx.pools.kvserver(ctx.service, KVServerConnection(), url=ctx.options.dsn)
        return adapter

    def close(self) -> None:
        """Prove the client is still leased when the service closes."""
        assert self.client.ping() is True
        super().close()


class NotAnAdapter:
    """A class without ``open``."""


def plugin_factory(ctx: OpenContext) -> RecordingAdapter:
    """Build a plugin from its context (a plain function, dotted-path style)."""
    return RecordingAdapter.open(ctx)


# ---------------------------------------------------------------------- fixtures


def fake_module(name: str, **attributes: Any) -> types.ModuleType:
    """Return a module object named ``name`` carrying ``attributes``."""
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


@pytest.fixture
def no_batteries(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Hide the real batteries' adapter tables and base classes for the test.

    The container tests configure dotted-path adapters; a battery written concurrently
    must not change what they resolve (its base class would reject the fakes).
    """
    for spec in catalog.SERVICES.values():
        for part in ("adapters", "base"):
            name = f"{spec.package}.{part}"
            monkeypatch.setitem(sys.modules, name, fake_module(name))
    loading.clear_cache()
    reset()
    yield
    loading.clear_cache()
    RELEASE.set()
