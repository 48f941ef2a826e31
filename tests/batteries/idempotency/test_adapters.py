"""Adapter-specific behaviour: memory's bound, the Redis record, the SQL table."""

from __future__ import annotations

import time

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.idempotency import ReservationState
from toolkit_batteries.idempotency.adapters.memory import (
    DEFAULT_MAX_BYTES,
    RECORD_OVERHEAD,
    MemoryIdempotency,
)

from ..cache.helpers import FakeClock, PrivateRedis, unique


def open_store(block: dict, instance: str = "default"):
    container = Container(Config.load({"idempotency": {instance: block}}, {}))
    return container, container.idempotency(instance)


# ---------------------------------------------------------------------- memory


def test_memory_defaults_follow_the_spec():
    _, store = open_store({})
    assert isinstance(store, MemoryIdempotency)
    assert (store.max_entries, store.default_ttl) == (1000, 86400.0)
    assert store.max_bytes == DEFAULT_MAX_BYTES == 64 * 1024 * 1024 and store.bytes == 0


def test_memory_counts_bytes_through_every_path():
    _, store = open_store({})
    store.clock = FakeClock()
    store.reserve("a", ttl=1, fingerprint="f" * 10)
    after_reserve = store.bytes
    assert after_reserve == RECORD_OVERHEAD + 1 + 32 + 10
    store.commit("a", b"x" * 100)
    assert store.bytes == after_reserve + 101  # the b"b" marker and the body
    store.reserve("b").release()
    store.reserve("c")
    store.delete("c")
    assert store.bytes == after_reserve + 101
    store.clock.advance(2 * 86400)
    assert store.get("a") is None and store.bytes == 0  # expiry gives the bytes back


def test_memory_drops_expired_records_before_evicting_live_ones():
    _, store = open_store({"options": {"max_entries": 3}})
    store.clock = FakeClock()
    store.reserve("short", ttl=1)
    store.reserve("a")
    store.reserve("b")
    store.clock.advance(2)
    store.reserve("c")  # full: the expired record goes first
    assert store.size() == 3
    assert {k for k in ("a", "b", "c") if store.get(k)} == {"a", "b", "c"}


def test_memory_evicts_the_least_recently_used_record_when_all_are_live():
    _, store = open_store({"options": {"max_entries": 2}})
    store.reserve("a").commit({"v": "a"})
    store.reserve("b").commit({"v": "b"})
    assert store.reserve("a").state is ReservationState.COMPLETED  # a is now recent
    store.reserve("c")
    assert store.get("b") is None and store.get("a") is not None and store.size() == 2


# ---------------------------------------------------------------------- kvserver


def test_kvserver_record_is_an_expiring_hash(redis_url, raw):
    prefix = unique("t-") + ":"
    container, store = open_store(
        {"adapter": "kvserver", "options": {"kvserver": {"addr": redis_url, "prefix": prefix}}}
    )
    try:
        reservation = store.reserve("k", ttl=60, fingerprint="fp")
        fields = raw.hgetall(prefix + "k")
        assert fields == {b"s": b"in_progress", b"t": reservation.token.encode(), b"f": b"fp"}
        assert 59_000 < raw.pttl(prefix + "k") <= 60_000
        reservation.commit(b"body", ttl=120)
        assert (
            raw.hget(prefix + "k", "r") == b"bbody" and raw.hget(prefix + "k", "s") == b"completed"
        )
        assert 119_000 < raw.pttl(prefix + "k") <= 120_000
    finally:
        raw.delete(prefix + "k")
        container.close()


def test_kvserver_default_prefix_names_the_instance_and_url_is_ignored(redis_url):
    block = {
        "adapter": "kvserver",
        "options": {"kvserver": {"addr": redis_url, "url": "redis://127.0.0.1:1"}},
    }
    container, store = open_store(block, "payments")
    key = unique()
    try:
        assert store.prefix == "toolkit:idempotency:payments:"
        assert store.reserve(key).state is ReservationState.NEW  # addr was used
    finally:
        store.delete(key)
        container.close()


def test_kvserver_unreachable_fails_fast_and_recovers(tmp_path):
    server = PrivateRedis(tmp_path)
    server.start()
    container, store = open_store(
        {"adapter": "kvserver", "options": {"kvserver": {"addr": server.url}}}
    )
    try:
        assert store.reserve("k").state is ReservationState.NEW
        server.kill()
        started = time.monotonic()
        with pytest.raises(ServiceUnavailableError, match=r"idempotency\.default: unavailable"):
            store.reserve("k")
        assert time.monotonic() - started < 2
        server.start()
        assert store.reserve("k").state is ReservationState.NEW  # the new server is empty
    finally:
        container.close()
        server.kill()


# ---------------------------------------------------------------------- db


def test_db_rows_carry_the_instance_and_borrow_the_db_service(sqlite_dsn):
    instance = unique()
    container = Container(
        Config.load(
            {
                "db": {"adapter": "sqlfile", "options": {"path": sqlite_dsn}},
                "idempotency": {instance: {"adapter": "db"}, "other": {"adapter": "db"}},
            },
            {},
        )
    )
    try:
        store, other = container.idempotency(instance), container.idempotency("other")
        assert store.database is container.db()
        store.reserve("k", fingerprint="fp")
        assert other.reserve("k").state is ReservationState.NEW  # instances never meet
        rows = container.db().fetch_all(
            "SELECT instance, key, state, fingerprint FROM toolkit_idempotency_record "
            "ORDER BY instance"
        )
        assert rows == sorted(
            [(instance, "k", "in_progress", "fp"), ("other", "k", "in_progress", "")]
        )
    finally:
        container.close()


def test_db_purges_expired_records(postgres_dsn):
    instance = unique()
    container, store = open_store({"adapter": "db", "options": {"dsn": postgres_dsn}}, instance)
    try:
        store.clock = FakeClock(time.time())
        store.reserve("a", ttl=1)
        store.reserve("b", ttl=1000)
        store.clock.advance(5)
        assert store.purge() == 1
        assert store._rows.count() == 1
    finally:
        store._rows.delete()
        container.close()
