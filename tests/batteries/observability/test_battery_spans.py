"""Battery operations that cross a process boundary emit spans (``core/tracing.py``).

The otlp adapter exports to the local OTLP/HTTP receiver, which decodes the protobuf;
the cache, queue, lock and db calls go to the machine's real Redis and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import import_module

import pytest

from toolkit_batteries.core import tracing
from toolkit_batteries.core.catalog import SERVICES
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .conftest import otlp_options
from .receiver import Receiver

#: Adapters that never leave the process (memory, files, in-process engines) or whose
#: remote calls are traced by a library instrumentation instead. Any other adapter must
#: declare its remote operations with ``@traced``.
IN_PROCESS = {
    ("analytics", "log"),
    ("cdn", "noop"),
    ("auth", "jwt"),
    ("auth", "session"),
    ("billing", "stub"),
    ("cache", "memory"),
    ("db", "sqlfile"),
    ("eventbus", "memory"),
    ("flag", "static"),
    ("geo", "static"),
    ("i18n", "embed"),
    ("idempotency", "memory"),
    ("lock", "memory"),
    ("mailer", "log"),
    ("notification", "log"),
    ("media", "local"),
    ("crypto", "local"),
    ("log", "log_b"),
    ("log", "noop"),
    ("log", "pretty"),
    ("log", "slog"),
    ("password", "argon2id"),
    ("payment", "stub"),
    ("resilience", "memory"),
    ("mailer", "memory"),
    ("observability", "noop"),
    ("outbox", "memory"),
    ("observability", "otlp"),
    ("observability", "stdout"),
    ("permission", "noop"),
    ("permission", "policyfile"),
    ("permission", "rbac"),
    ("queue", "memory"),
    ("ratelimit", "memory"),
    ("router", "router_a"),
    ("router", "stdhttp"),
    ("scheduler", "embedded"),
    ("secrets", "env"),
    ("session", "memory"),
    ("storage", "local"),
    ("tenant", "header"),
    ("tenant", "single"),
    ("workflow", "memory"),
}


#: Adapters whose remote calls go through another traced class: adapter -> that class.
TRACED_ELSEWHERE = {
    ("media", "objstore"): "toolkit_batteries.storage.adapters.s3.S3Storage",
    ("resilience", "kvserver"): (
        "toolkit_batteries.resilience.adapters.kvserver.KVServerBreakerStore"
    ),
}


@pytest.fixture(autouse=True)
def _fresh_tracer() -> Iterator[None]:
    tracing.reset()
    yield
    tracing.reset()
    # Django holds the kvserver cache objects these tests make: return their Redis leases
    from toolkit_batteries.cache.adapters.kvserver import release_leases

    release_leases()


def _adapter_classes() -> Iterator[tuple[str, str, type]]:
    for service in SERVICES:
        try:
            table = import_module(f"toolkit_batteries.{service}.adapters").ADAPTERS
        except ModuleNotFoundError:
            continue  # a battery not built yet has no adapter table
        for name, path in table.items():
            module, _, attr = path.rpartition(".")
            yield service, name, getattr(import_module(module), attr)


def test_every_remote_adapter_declares_traced_operations() -> None:
    untraced = sorted(
        f"{service}.{name}"
        for service, name, cls in _adapter_classes()
        if (service, name) not in IN_PROCESS
        and not getattr(_carrier(service, name, cls), "__traced__", ())
    )
    assert untraced == [], "adapters crossing a process boundary without @traced"


def _carrier(service: str, name: str, cls: type) -> type:
    """Return the class that traces the adapter's remote calls (itself, or one it uses)."""
    dotted = TRACED_ELSEWHERE.get((service, name))
    if dotted is None:
        return cls
    module, _, attr = dotted.rpartition(".")
    return getattr(import_module(module), attr)


def test_in_process_list_names_only_real_adapters() -> None:
    known = {(service, name) for service, name, _ in _adapter_classes()}
    assert IN_PROCESS - known == set()
    assert set(TRACED_ELSEWHERE) - known == set()
    assert IN_PROCESS.isdisjoint(TRACED_ELSEWHERE)


def test_untraced_process_pays_one_shared_null_context() -> None:
    first = tracing.operation("cache", "default", "get")
    assert first is tracing.operation("queue", "default", "push")
    assert tracing.active() is None


def test_spans_of_cache_queue_lock_and_db_reach_the_collector_as_children(
    receiver: Receiver, redis_url: str, postgres_dsn: str
) -> None:
    config = Config.load(
        {
            "observability": {
                "default": {"adapter": "otlp", "options": otlp_options(receiver, sample_ratio=1.0)}
            },
            "cache": {"default": {"adapter": "kvserver", "options": {"url": redis_url}}},
            "queue": {"default": {"adapter": "kvserver", "options": {"url": redis_url}}},
            "lock": {"default": {"adapter": "kvserver", "options": {"url": redis_url}}},
            "db": {"reports": {"adapter": "sqlserver", "options": {"dsn": postgres_dsn}}},
        },
        {},
    )
    container = Container(config)
    try:
        obs = container.observability()
        assert tracing.active() is obs
        cache, queue, lock, db = (
            container.cache(),
            container.queue(),
            container.lock(),
            container.db("reports"),
        )
        with obs.span("request"):
            cache.set("spans:key", "value", 30)
            assert cache.get("spans:key") == "value"
            queue.push("spans-topic", b"payload")
            with lock.hold("spans:lock", ttl=5):
                pass
            assert db.fetch_value("SELECT 1") == 1
        assert obs.flush(5.0)
        spans = receiver.spans()
        [request] = [s for s in spans if s["name"] == "request"]
        children = {s["name"]: s for s in spans if s["parent_id"] == request["span_id"]}
        for name, service, instance in [
            ("cache.set", "cache", "default"),
            ("cache.get", "cache", "default"),
            ("queue.push", "queue", "default"),
            ("lock.try_acquire", "lock", "default"),
            ("lock.release", "lock", "default"),
            ("db.fetch_value", "db", "reports"),
        ]:
            assert name in children, f"{name} is not a child span of the request"
            attributes = children[name]["attributes"]
            assert attributes["toolkit.service"] == service
            assert attributes["toolkit.instance"] == instance
    finally:
        container.close()
    assert tracing.active() is None, "closing the tracer's container stops tracing"


def test_a_failed_operation_marks_its_span(receiver: Receiver, redis_url: str) -> None:
    config = Config.load(
        {
            "observability": {
                "default": {"adapter": "otlp", "options": otlp_options(receiver, sample_ratio=1.0)}
            },
            "cache": {"default": {"adapter": "kvserver", "options": {"url": redis_url}}},
        },
        {},
    )
    container = Container(config)
    try:
        obs, cache = container.observability(), container.cache()
        cache.delete("spans:missing")
        with pytest.raises(ValueError):  # Django's contract: incr of a missing key
            cache.incr("spans:missing")
        assert obs.flush(5.0)
        [incr] = [s for s in receiver.spans() if s["name"] == "cache.incr"]
        assert incr["status"] == 2  # StatusCode.ERROR
        assert incr["attributes"]["toolkit.service"] == "cache"
    finally:
        container.close()
