"""One contract for every session adapter: the same calls give the same results on each."""

from __future__ import annotations

import re
import threading
import time
from datetime import timedelta

import pytest

from toolkit_batteries.session import SessionStore

FIFTEEN_MINUTES_MS = 15 * 60 * 1000


def pttl(opened, sid: str) -> int:
    """Return the key's remaining lifetime in ms on the key-value server."""
    return opened.redis.pttl(f"{opened.prefix}session:{sid}")


class TestSessionContract:
    """Run against memory, kvserver (real Redis), db on SQLite and db on PostgreSQL."""

    def test_identity(self, opened):
        store = opened.store
        assert isinstance(store, SessionStore)
        assert store.adapter_name == opened.variant.split("-")[0]
        assert store.service_name == "session" and store.instance == "default"
        assert store.ttl == timedelta(minutes=15)
        assert opened.container.session() is store

    def test_create_returns_fresh_random_ids_and_get_returns_the_data(self, opened):
        store = opened.store
        ids = {store.create({"user_id": i}) for i in range(20)}
        assert len(ids) == 20
        for sid in ids:
            assert re.fullmatch(r"[A-Za-z0-9_-]{43}", sid)
        sid = store.create({"user_id": 7, "roles": ["a", "b"], "name": "Zoë", "n": None})
        assert store.get(sid) == {"user_id": 7, "roles": ["a", "b"], "name": "Zoë", "n": None}

    def test_get_returns_a_copy(self, opened):
        store = opened.store
        sid = store.create({"cart": [1]})
        first = store.get(sid)
        first["cart"].append(2)
        first["extra"] = True
        assert store.get(sid) == {"cart": [1]}

    def test_data_is_json_on_every_adapter(self, opened):
        store = opened.store
        sid = store.create({"pair": (1, 2), "nested": {"k": [True, 1.5]}})
        assert store.get(sid) == {"pair": [1, 2], "nested": {"k": [True, 1.5]}}
        with pytest.raises(TypeError):
            store.create({"when": object()})
        with pytest.raises(TypeError):
            store.create(["not", "a", "mapping"])  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            store.create({"nan": float("nan")})

    @pytest.mark.parametrize(
        "bad", [None, "", "x" * 200, "has space", "semi;colon", "dots.in.id", 42, b"bytes"]
    )
    def test_ids_that_could_not_have_been_issued_are_missing(self, opened, bad):
        store = opened.store
        assert store.get(bad) is None
        assert store.update(bad, {"a": 1}) is False
        assert store.touch(bad) is False
        store.delete(bad)  # no error

    def test_missing_sessions(self, opened):
        store = opened.store
        unknown = "A" * 43
        assert store.get(unknown) is None
        assert store.update(unknown, {"a": 1}) is False
        assert store.touch(unknown) is False
        store.delete(unknown)
        assert store.get(unknown) is None  # update/touch never create

    def test_update_replaces_the_data(self, opened):
        store = opened.store
        sid = store.create({"a": 1, "b": 2})
        assert store.update(sid, {"c": 3}) is True
        assert store.get(sid) == {"c": 3}
        with pytest.raises(TypeError):
            store.update(sid, {"bad": object()})
        assert store.get(sid) == {"c": 3}

    def test_delete(self, opened):
        store = opened.store
        keep, gone = store.create({"k": 1}), store.create({"g": 1})
        store.delete(gone)
        assert store.get(gone) is None
        assert store.get(keep) == {"k": 1}
        store.delete(gone)  # deleting twice is fine

    def test_ttl_must_be_a_positive_timedelta(self, opened):
        store = opened.store
        for bad in (timedelta(0), timedelta(seconds=-1)):
            with pytest.raises(ValueError):
                store.create({}, ttl=bad)
        with pytest.raises(TypeError):
            store.create({}, ttl=60)  # type: ignore[arg-type]
        sid = store.create({})
        with pytest.raises(ValueError):
            store.touch(sid, timedelta(0))

    def test_sessions_expire_after_the_default_ttl(self, opened):
        store = opened.store
        sid = store.create({"u": 1})
        if opened.real_time:
            assert FIFTEEN_MINUTES_MS - 5000 < pttl(opened, sid) <= FIFTEEN_MINUTES_MS
            # The get has to land inside the lifetime on Redis's real clock: 1 s, which a
            # loaded two-core machine cannot miss (40 ms could be missed).
            short = store.create({"u": 2}, ttl=timedelta(seconds=1))
            assert store.get(short) == {"u": 2}
            time.sleep(1.1)
            assert store.get(short) is None
            return
        opened.clock.advance(15 * 60 - 1)
        assert store.get(sid) == {"u": 1}
        opened.clock.advance(1)
        assert store.get(sid) is None
        assert store.update(sid, {"u": 2}) is False
        assert store.touch(sid) is False

    def test_create_with_its_own_ttl(self, opened):
        store = opened.store
        sid = store.create({"u": 1}, ttl=timedelta(hours=2))
        if opened.real_time:
            assert 2 * 3600_000 - 5000 < pttl(opened, sid) <= 2 * 3600_000
            return
        opened.clock.advance(2 * 3600 - 1)
        assert store.get(sid) == {"u": 1}
        opened.clock.advance(2)
        assert store.get(sid) is None

    def test_update_keeps_the_expiry(self, opened):
        store = opened.store
        sid = store.create({"v": 1}, ttl=timedelta(minutes=10))
        if opened.real_time:
            opened.redis.pexpire(f"{opened.prefix}session:{sid}", 123_456)
            assert store.update(sid, {"v": 2}) is True
            assert 120_000 < pttl(opened, sid) <= 123_456
            assert store.get(sid) == {"v": 2}
            return
        opened.clock.advance(9 * 60)
        assert store.update(sid, {"v": 2}) is True
        opened.clock.advance(61)
        assert store.get(sid) is None

    def test_touch_restarts_the_lifetime(self, opened):
        store = opened.store
        sid = store.create({"v": 1})
        if opened.real_time:
            opened.redis.pexpire(f"{opened.prefix}session:{sid}", 1000)
            assert store.touch(sid) is True
            assert FIFTEEN_MINUTES_MS - 5000 < pttl(opened, sid) <= FIFTEEN_MINUTES_MS
            assert store.touch(sid, timedelta(seconds=30)) is True
            assert 25_000 < pttl(opened, sid) <= 30_000
            assert store.get(sid) == {"v": 1}
            return
        opened.clock.advance(14 * 60)
        assert store.touch(sid) is True
        opened.clock.advance(14 * 60)
        assert store.get(sid) == {"v": 1}
        assert store.touch(sid, timedelta(seconds=30)) is True
        opened.clock.advance(31)
        assert store.get(sid) is None

    def test_purge_expired(self, opened):
        store = opened.store
        live = store.create({"live": 1}, ttl=timedelta(hours=1))
        for _ in range(3):
            store.create({"old": 1}, ttl=timedelta(minutes=1))
        if opened.real_time:
            assert store.purge_expired() == 0  # the server expires keys itself
            assert store.get(live) == {"live": 1}
            return
        opened.clock.advance(120)
        assert store.purge_expired() == 3
        assert store.purge_expired() == 0
        assert store.get(live) == {"live": 1}

    def test_concurrent_use(self, opened):
        store = opened.store
        made: list[str] = []
        lock = threading.Lock()

        def work(worker: int) -> None:
            for i in range(15):
                sid = store.create({"w": worker, "i": i})
                assert store.get(sid) == {"w": worker, "i": i}
                assert store.update(sid, {"w": worker, "i": i, "done": True})
                with lock:
                    made.append(sid)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(made) == len(set(made)) == 90
        assert all(store.get(sid)["done"] is True for sid in made)
