"""Container: accessors, lazy open, caching, retries, threads (spec "States and transitions")."""

from __future__ import annotations

import ast
import inspect
import threading
from pathlib import Path

import pytest

from tests.core import fakes
from tests.core.fakes import EVENTS, config, no_batteries, path  # noqa: F401 - fixture
from toolkit_batteries.core import catalog
from toolkit_batteries.core import container as container_module
from toolkit_batteries.core.container import Container, ContainerClosedError
from toolkit_batteries.core.errors import (
    ConfigurationError,
    ServiceUnavailableError,
    UnknownAdapterError,
    UnknownInstanceError,
)

pytestmark = pytest.mark.usefixtures("no_batteries")

# The spec's 37 accessors ("Configuration model"), in snake case.
SPEC_ACCESSORS = [
    "ai", "analytics", "auth", "billing", "cache", "cdn", "crypto", "db", "document",
    "eventbus", "flag", "geo", "i18n", "idempotency", "lock", "log", "mailer", "media",
    "notification", "observability", "outbox", "password", "payment", "permission", "queue",
    "ratelimit", "resilience", "router", "scheduler", "search", "secrets", "session",
    "storage", "tenant", "vectorstore", "webhook", "workflow",
]  # fmt: skip


def test_one_accessor_per_catalog_service_with_the_spec_names() -> None:
    assert len(SPEC_ACCESSORS) == 37
    assert sorted(catalog.SERVICES) == sorted(SPEC_ACCESSORS)
    for name in SPEC_ACCESSORS:
        accessor = getattr(Container, name)
        assert inspect.isfunction(accessor), name
        assert accessor.__qualname__ == f"Container.{name}"
        assert accessor.__doc__ and accessor.__doc__.startswith(f"Return the {name} service")
        assert list(inspect.signature(accessor).parameters) == ["self", "instance"]
        assert inspect.signature(accessor).parameters["instance"].default == "default"


def test_static_declarations_for_ides_match_the_catalog() -> None:
    # The typed accessors live in a stub generated from the catalog, outside core/ (the
    # kernel imports no battery); the container derives from it for type checkers only.
    source = Path(container_module.__file__).read_text()
    (cls,) = (
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.ClassDef) and node.name == "Container"
    )
    assert [ast.unparse(base) for base in cls.bases] == ["_Accessors"]
    stub = Path(container_module.__file__).parent.parent / "_accessors.pyi"
    (typed,) = (
        node
        for node in ast.parse(stub.read_text()).body
        if isinstance(node, ast.ClassDef) and node.name == "Accessors"
    )
    declared = [node.name for node in typed.body if isinstance(node, ast.FunctionDef)]
    assert declared == sorted(catalog.SERVICES)
    assert Container.__mro__[1] is object  # nothing of the stub exists at run time


def test_nothing_opens_before_an_accessor_is_called() -> None:
    c = Container(config(cache={"adapter": path("RecordingAdapter")}))
    assert EVENTS == []
    assert c.opened() == ()
    c.cache()
    assert EVENTS == [("open", "cache", "default")]
    assert c.opened() == (("cache", "default"),)


def test_default_config_when_none_given() -> None:
    c = Container()
    assert c.config.service("cache").adapter == catalog.SERVICES["cache"].default_adapter
    assert c.opened() == ()


def test_success_is_cached() -> None:
    c = Container(config(cache={"adapter": path("RecordingAdapter")}))
    first = c.cache()
    assert c.cache() is first
    assert c.cache("default") is first
    assert EVENTS == [("open", "cache", "default")]


def test_open_context_carries_service_instance_adapter_options_and_container() -> None:
    c = Container(
        config(
            cache={"primary": {"adapter": path("RecordingAdapter"), "options": {"max_entries": 7}}}
        )
    )
    ctx = c.cache("primary").ctx
    assert (ctx.service, ctx.instance, ctx.adapter) == (
        "cache",
        "primary",
        path("RecordingAdapter"),
    )
    assert ctx.options.max_entries == 7
    assert ctx.container is c
    assert ctx.pools is c.pools


def test_instances_are_separate_objects() -> None:
    c = Container(
        config(
            cache={
                "default": {"adapter": path("RecordingAdapter")},
                "primary": {"adapter": path("RecordingAdapter")},
            }
        )
    )
    assert c.cache() is not c.cache("primary")
    assert c.opened() == (("cache", "default"), ("cache", "primary"))


def test_instance_name_spelled_differently_is_the_same_instance() -> None:
    c = Container(config(cache={"primary": {"adapter": path("RecordingAdapter")}}))
    assert c.cache("PRIMARY") is c.cache("primary")
    assert c.opened() == (("cache", "primary"),)


def test_unknown_instance_fails_and_opens_nothing() -> None:
    c = Container(config(cache={"adapter": path("RecordingAdapter")}))
    with pytest.raises(UnknownInstanceError, match=r'cache: no instance "primry"'):
        c.cache("primry")
    assert c.opened() == ()


def test_unknown_adapter_fails_at_open_not_at_construction() -> None:
    c = Container(config(cache={"adapter": "nonexistent"}))
    with pytest.raises(UnknownAdapterError, match=r'cache: unknown adapter "nonexistent"'):
        c.cache()


def test_failed_open_is_not_cached_and_the_next_call_retries() -> None:
    c = Container(config(cache={"adapter": path("FlakyAdapter")}))
    with pytest.raises(ServiceUnavailableError):
        c.cache()
    assert c.opened() == ()
    opened = c.cache()
    assert isinstance(opened, fakes.FlakyAdapter)
    assert c.cache() is opened
    assert c.opened() == (("cache", "default"),)


def test_concurrent_first_calls_open_once() -> None:
    c = Container(config(cache={"adapter": path("SlowOpenAdapter")}))
    barrier = threading.Barrier(8)
    results: list[object] = []

    def call() -> None:
        barrier.wait()
        results.append(c.cache())

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(results) == 8
    assert all(result is results[0] for result in results)
    assert fakes._counts["slow-open:cache"] == 1


def test_different_services_open_in_parallel() -> None:
    c = Container(
        config(
            cache={"adapter": path("SlowOpenAdapter")}, queue={"adapter": path("SlowOpenAdapter")}
        )
    )
    threads = [threading.Thread(target=getattr(c, name)) for name in ("cache", "queue")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert {pair[0] for pair in c.opened()} == {"cache", "queue"}


def test_opened_service_is_returned_without_taking_a_lock() -> None:
    c = Container(config(cache={"adapter": path("RecordingAdapter")}))
    opened = c.cache()
    results: list[object] = []
    with c._guard:  # a slow path would block here
        thread = threading.Thread(target=lambda: results.append(c.cache()))
        thread.start()
        thread.join(2)
    assert results == [opened]


def test_dependency_opens_inside_the_dependant_and_is_recorded_first() -> None:
    c = Container(
        config(cache={"adapter": path("NeedsDBAdapter")}, db={"adapter": path("RecordingAdapter")})
    )
    c.cache()
    assert c.opened() == (("db", "default"), ("cache", "default"))
    assert c.db() is c.db()
    assert EVENTS == [("open", "db", "default"), ("open", "cache", "default")]


def test_dependency_cycle_fails_clearly_instead_of_hanging() -> None:
    c = Container(
        config(cache={"adapter": path("CycleAdapter")}, queue={"adapter": path("CycleAdapter")})
    )
    with pytest.raises(
        ConfigurationError, match=r"cycle.*cache\.default -> queue\.default -> cache\.default"
    ):
        c.cache()
    assert c.opened() == ()


def test_accessor_after_close_raises_a_clear_error() -> None:
    c = Container(config(cache={"adapter": path("RecordingAdapter")}))
    c.cache()
    c.close()
    with pytest.raises(ContainerClosedError, match=r"container is closed; cache\.default"):
        c.cache()
    with pytest.raises(ContainerClosedError, match=r"db\.default"):
        c.db()


def test_context_manager_closes() -> None:
    with Container(config(cache={"adapter": path("RecordingAdapter")})) as c:
        c.cache()
    assert c.closed
    assert EVENTS[-1] == ("close", "cache", "default")


def test_repr_names_no_values() -> None:
    c = Container(config(cache={"adapter": path("RecordingAdapter")}))
    c.cache()
    assert repr(c) == "<Container open, 1 opened>"
