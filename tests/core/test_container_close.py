"""Container.close(): reverse order, once per object, time limits, gathered failures."""

from __future__ import annotations

import time

import pytest

from tests.core import fakes
from tests.core.fakes import EVENTS, config, no_batteries, path  # noqa: F401 - fixture
from toolkit_batteries.core import container as container_module
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import (
    ClosePanicError,
    CloseTimeoutError,
    ServiceUnavailableError,
)

pytestmark = pytest.mark.usefixtures("no_batteries")


def closes() -> list[tuple[str, str]]:
    return [(service, instance) for event, service, instance in EVENTS if event == "close"]


def four_services(cache: str, queue: str) -> Container:
    """Return a Container of db and mailer (recording) with ``cache`` and ``queue`` adapters."""
    return Container(
        config(
            db={"adapter": path("RecordingAdapter")},
            cache={"adapter": path(cache)},
            queue={"adapter": path(queue)},
            mailer={"adapter": path("RecordingAdapter")},
        )
    )


def test_default_limit_is_five_seconds() -> None:
    assert container_module.CLOSE_TIMEOUT == 5.0


def test_close_closes_only_what_was_opened() -> None:
    c = Container(
        config(
            cache={"adapter": path("RecordingAdapter")}, db={"adapter": path("RecordingAdapter")}
        )
    )
    c.cache()
    c.close()
    assert closes() == [("cache", "default")]


def test_close_runs_in_reverse_dependency_order() -> None:
    c = four_services("NeedsDBAdapter", "NeedsCacheAndDBAdapter")
    c.queue()
    c.mailer()
    assert c.opened() == (
        ("db", "default"),
        ("cache", "default"),
        ("queue", "default"),
        ("mailer", "default"),
    )
    c.close()
    assert closes() == [
        ("mailer", "default"),
        ("queue", "default"),
        ("cache", "default"),
        ("db", "default"),
    ]


def test_shared_object_is_closed_once() -> None:
    fakes.SHARED.closed = 0
    c = Container(
        config(
            cache={
                "default": {"adapter": path("SharedAdapter")},
                "other": {"adapter": path("SharedAdapter")},
            },
            queue={"adapter": path("SharedAdapter")},
        )
    )
    assert c.cache() is c.cache("other") is c.queue()
    c.close()
    assert fakes.SHARED.closed == 1


def test_object_without_close_is_skipped() -> None:
    c = Container(
        config(crypto={"adapter": path("NoCloseAdapter")}, db={"adapter": path("RecordingAdapter")})
    )
    c.db()
    c.crypto()
    c.close()
    assert closes() == [("db", "default")]


def test_closing_twice_is_a_no_op() -> None:
    c = Container(config(cache={"adapter": path("RecordingAdapter")}))
    adapter = c.cache()
    c.close()
    c.close()
    assert adapter.closed == 1


def test_opened_record_survives_close() -> None:
    c = Container(config(cache={"adapter": path("RecordingAdapter")}))
    c.cache()
    c.close()
    assert c.opened() == (("cache", "default"),)


def test_panic_and_toolkit_errors_are_gathered_after_everything_was_closed() -> None:
    c = four_services("PanicCloseAdapter", "ToolkitErrorCloseAdapter")
    for name in ("db", "cache", "queue", "mailer"):
        getattr(c, name)()
    with pytest.raises(ExceptionGroup) as caught:
        c.close()
    group = caught.value
    assert group.message == "toolkit: close failed"
    assert closes() == [
        ("mailer", "default"),
        ("queue", "default"),
        ("cache", "default"),
        ("db", "default"),
    ]
    queue_error, cache_error = group.exceptions
    assert isinstance(queue_error, ServiceUnavailableError)  # a ToolkitError is kept as is
    assert isinstance(cache_error, ClosePanicError)
    assert (cache_error.service, cache_error.instance) == ("cache", "default")
    assert isinstance(cache_error.cause, RuntimeError)
    assert cache_error.__cause__ is cache_error.cause
    assert "boom" not in str(cache_error)  # the cause's text may hold values


def test_default_limit_bounds_each_close(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(container_module, "CLOSE_TIMEOUT", 0.05)
    c = Container(
        config(
            cache={"adapter": path("HangingCloseAdapter")}, db={"adapter": path("RecordingAdapter")}
        )
    )
    c.db()
    c.cache()
    started = time.monotonic()
    with pytest.raises(ExceptionGroup) as caught:
        c.close()
    assert time.monotonic() - started < 2
    (error,) = caught.value.exceptions
    assert isinstance(error, CloseTimeoutError)
    assert isinstance(error, TimeoutError)
    assert (error.service, error.instance, error.timeout) == ("cache", "default", 0.05)
    assert closes() == [("db", "default")]  # the next service still closed


def test_deadline_bounds_every_wait_and_replaces_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(container_module, "CLOSE_TIMEOUT", 60.0)  # must not be used
    c = Container(
        config(
            cache={"adapter": path("HangingCloseAdapter")},
            queue={"adapter": path("HangingCloseAdapter")},
        )
    )
    c.cache()
    c.queue()
    started = time.monotonic()
    with pytest.raises(ExceptionGroup) as caught:
        c.close(deadline=started + 0.2)
    elapsed = time.monotonic() - started
    assert elapsed < 5.0  # the 0.2 s deadline, with room for a loaded machine; not 60 s
    errors = caught.value.exceptions
    assert [type(e) for e in errors] == [CloseTimeoutError, CloseTimeoutError]
    assert [e.service for e in errors] == ["queue", "cache"]
    assert errors[0].timeout <= 0.2
    assert errors[1].timeout < errors[0].timeout  # the remaining time shrinks


def test_pools_close_after_every_service() -> None:
    from django.conf import settings

    dsn = settings.TEST_REDIS_URL
    c = Container(config(cache={"adapter": path("PoolUsingAdapter"), "options": {"dsn": dsn}}))
    c.cache()
    assert not c.pools.closed
    c.close()  # the adapter's close queries the pool: it must still be open
    assert closes() == [("cache", "default")]
    assert c.pools.closed
