"""Django's session contract on ``toolkit_batteries.session.engine``, on every adapter.

The behaviours are those Django's own session tests (``sessions_tests.SessionTestsMixin``)
pin on its engines, written again here and run against memory, kvserver (the real
Redis), db on SQLite and db on the real PostgreSQL: create/save/exists/delete/load,
``cycle_key``, ``flush``, expiry in seconds, timedelta, datetime, 0 and None, a past
expiry, ``clear_expired`` and ``manage.py clearsessions``, ``CreateError`` and
``UpdateError``, corrupt or tampered data read as an empty session, and the async API.
``services.session()`` is the store the engine writes to.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.sessions.backends.base import CreateError, UpdateError
from django.core import signing
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from toolkit_batteries import services
from toolkit_batteries.session import engine
from toolkit_batteries.session.engine import FIELD, SessionStore

from .conftest import VARIANTS, FakeClock, settings_for

ENGINE = "toolkit_batteries.session.engine"


@dataclass
class Engine:
    """The engine class under one variant's TOOLKIT, and the store it writes to."""

    variant: str
    backend: type[SessionStore]
    redis: Any = None
    prefix: str = ""

    @property
    def store(self) -> Any:
        return services.session()

    def fake_clock(self) -> FakeClock | None:
        """Give a clock-driven store a fake clock (None on the key-value server)."""
        if self.variant == "kvserver":
            return None
        clock = FakeClock(timezone.now().timestamp())
        self.store.clock = clock
        return clock

    def pttl(self, key: str) -> int:
        return self.redis.pttl(f"{self.prefix}session:{key}")


@pytest.fixture(params=VARIANTS)
def eng(request, tmp_path) -> Iterator[Engine]:
    toolkit, facts = settings_for(request.param, request, tmp_path)
    with override_settings(TOOLKIT=toolkit, SESSION_ENGINE=ENGINE):
        try:
            yield Engine(request.param, SessionStore, facts.get("redis"), facts.get("prefix", ""))
        finally:
            services.reset()


# ------------------------------------------------------------------ the store is one


def test_the_engine_writes_to_the_store_services_session_returns(eng):
    session = eng.backend()
    session["cart"] = [1, 2]
    session.save()
    record = services.session().get(session.session_key)
    assert set(record) == {FIELD}
    assert eng.backend(session.session_key)["cart"] == [1, 2]
    assert eng.backend.toolkit_store() is services.session()


# ------------------------------------------------------------------ create, save, load


def test_a_new_session_is_neither_accessed_nor_modified(eng):
    session = eng.backend()
    assert session.modified is False and session.accessed is False
    assert session.get("cat") is None
    session["cat"] = "dog"
    assert session.modified is True
    assert session.pop("cat") == "dog"


def test_save_stores_and_exists_finds_it(eng):
    session = eng.backend()
    session["a"] = "b"
    session.save()
    assert session["a"] == "b"  # saving keeps the data in the object
    assert session.exists(session.session_key) is True
    assert eng.backend(session.session_key).load() == {"a": "b"}


def test_delete_removes_the_session(eng):
    session = eng.backend()
    session.save()
    key = session.session_key
    session.delete(key)
    assert session.exists(key) is False
    session.delete(key)  # twice is harmless
    eng.backend().delete()  # no key: nothing to do


def test_flush_deletes_and_draws_a_new_key(eng):
    session = eng.backend()
    session["foo"] = "bar"
    session.save()
    old = session.session_key
    session.flush()
    assert session.exists(old) is False
    assert session.session_key != old
    assert session.modified is True and session.accessed is True


def test_cycle_key_keeps_the_data_under_a_new_key(eng):
    session = eng.backend()
    session["a"], session["b"] = "c", "d"
    session.save()
    old, data = session.session_key, list(session.items())
    session.cycle_key()
    assert session.session_key != old
    assert list(session.items()) == data
    assert session.exists(old) is False
    session.save()
    assert eng.backend(session.session_key).load() == dict(data)


def test_an_invalid_key_gets_a_new_one_on_save(eng):
    session = eng.backend("1")
    session.save()
    assert session.session_key != "1"
    assert session.get("cat") is None
    assert eng.backend("1").exists("1") is False


def test_loading_an_unknown_key_creates_nothing(eng):
    session = eng.backend("someunknownkey")
    assert session.load() == {}
    assert session.session_key is None
    assert session.exists("someunknownkey") is False


def test_an_unknown_key_saved_without_reading_starts_a_new_session(eng):
    session = eng.backend("someunknownkey")
    session.save()
    assert session.session_key not in (None, "someunknownkey")
    assert session.exists(session.session_key) is True


def test_the_session_key_is_read_only(eng):
    session = eng.backend()
    with pytest.raises(AttributeError):
        session.session_key = session._get_new_session_key()


def test_keys_django_refuses_are_none(eng):
    session = eng.backend()
    for bad in ("", "1234567"):
        session._session_key = bad
        assert session.session_key is None


def test_must_create_on_a_taken_key_raises_create_error(eng):
    first = eng.backend()
    first.save()
    second = eng.backend(first.session_key)
    with pytest.raises(CreateError):
        second.save(must_create=True)


def test_a_save_never_resurrects_a_session_deleted_elsewhere(eng):
    first = eng.backend()
    first["data"] = "one"
    first.save(must_create=True)
    eng.backend(first.session_key).delete()  # a logout in another tab
    first["data"] = "two"
    with pytest.raises(UpdateError):
        first.save()
    assert first.load() == {}


# ------------------------------------------------------------------ expiry


def test_the_default_expiry_is_the_cookie_age(eng):
    session = eng.backend()
    assert session.get_expiry_age() == settings.SESSION_COOKIE_AGE
    session.set_expiry(0)  # ends with the browser, but the server keeps the cookie age
    assert session.get_expiry_age() == settings.SESSION_COOKIE_AGE


def test_expiry_in_seconds_timedelta_and_datetime(eng):
    session = eng.backend()
    now = timezone.now()
    session.set_expiry(10)
    assert session.get_expiry_date(modification=now) == now + timedelta(seconds=10)
    assert session.get_expiry_age(modification=now) == 10
    session.set_expiry(now + timedelta(seconds=20))
    assert session.get_expiry_date(modification=now) == now + timedelta(seconds=20)
    assert session.get_expiry_age(modification=now) == 20
    session.set_expiry(timedelta(seconds=30))
    assert 29 <= session.get_expiry_age() <= 30
    session.set_expiry(None)
    assert session.get_expiry_age() == settings.SESSION_COOKIE_AGE


def test_expire_at_browser_close(eng):
    session = eng.backend()
    for at_close in (False, True):
        with override_settings(SESSION_EXPIRE_AT_BROWSER_CLOSE=at_close):
            session.set_expiry(10)
            assert session.get_expire_at_browser_close() is False
            session.set_expiry(0)
            assert session.get_expire_at_browser_close() is True
            session.set_expiry(None)
            assert session.get_expire_at_browser_close() is at_close


def test_a_past_expiry_expires_the_session_at_once(eng):
    session = eng.backend()
    session["foo"] = "bar"
    session.set_expiry(timezone.now() - timedelta(seconds=10))
    session.save()
    assert "foo" not in eng.backend(session.session_key)
    assert session.exists(session.session_key) is False


def test_the_store_keeps_the_session_for_its_expiry_age(eng):
    clock = eng.fake_clock()
    session = eng.backend()
    session["v"] = 1
    session.set_expiry(60)
    session.save()
    key = session.session_key
    if clock is None:
        assert 55_000 < eng.pttl(key) <= 60_000
        loaded = eng.backend(key)
        loaded.set_expiry(3600)
        loaded.save()  # a save rewrites the lifetime
        assert 3_595_000 < eng.pttl(key) <= 3_600_000
        return
    clock.advance(59)
    assert eng.backend(key).load() == {"v": 1, "_session_expiry": 60}
    clock.advance(2)
    assert eng.backend(key).load() == {}


def test_clear_expired_and_clearsessions_purge_the_store(eng):
    clock = eng.fake_clock()
    live, old = eng.backend(), eng.backend()
    live.set_expiry(3600)
    live.save()
    old.set_expiry(60)
    old.save()
    if clock is None:  # the server expires keys itself: a no-op that must not fail
        eng.backend.clear_expired()
        call_command("clearsessions")
        assert live.exists(live.session_key) and old.exists(old.session_key)
        return
    store = eng.store

    def held() -> int:  # records still held, expired or not
        return len(store) if eng.variant == "memory" else store._rows.count()

    clock.advance(120)
    assert held() == 2  # the expired one is invisible but still stored
    call_command("clearsessions")
    assert held() == 1
    assert live.exists(live.session_key) is True
    assert old.exists(old.session_key) is False


# ------------------------------------------------------------------ bad data


def test_tampered_or_corrupt_data_reads_as_an_empty_session(eng, caplog):
    session = eng.backend()
    session["admin"] = False
    session.save()
    key = session.session_key
    forged = eng.backend().encode({"admin": True})[:-3] + "AAA"  # a broken signature
    for bad in (forged, "not even base64 !", signing.get_cookie_signer().sign("x")):
        assert eng.store.update(key, {FIELD: bad}) is True
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="django.security.SuspiciousSession"):
            assert eng.backend(key).load() == {}
        assert any("corrupted" in r.getMessage() for r in caplog.records)


def test_a_record_of_another_kind_is_never_a_session(eng):
    token_id = eng.store.create({"kind": "toolkit.auth.token", "sub": "u-1"})
    session = eng.backend(token_id)
    assert session.load() == {}
    assert session.session_key is None
    assert session.exists(token_id) is False
    assert eng.store.get(token_id) == {"kind": "toolkit.auth.token", "sub": "u-1"}


def test_encode_and_decode_round_trip(eng):
    session = eng.backend()
    data = {"a test key": "a test value"}
    assert session.decode(session.encode(data)) == data


# ------------------------------------------------------------------ async


def test_the_async_api(eng):
    @async_to_sync
    async def run() -> None:
        session = eng.backend()
        await session.aset("k", "v")
        assert await session.aget("k") == "v"
        await session.asave()
        key = session.session_key
        assert await session.aexists(key) is True
        loaded = eng.backend(key)
        assert await loaded.aload() == {"k": "v"}
        await session.acycle_key()
        assert session.session_key != key and await session.aexists(key) is False
        await session.asave()
        assert await eng.backend(session.session_key).aget("k") == "v"
        await session.aset_expiry(120)
        assert await session.aget_expiry_age() == 120
        new_key = session.session_key
        await session.aflush()
        assert await session.aexists(new_key) is False
        await eng.backend.aclear_expired()

    run()


def test_create_gives_up_when_every_key_is_taken(eng, monkeypatch):
    taken = eng.backend()
    taken.save()
    monkeypatch.setattr(engine.SessionStore, "_get_new_session_key", lambda self: taken.session_key)
    with pytest.raises(RuntimeError, match="fresh keys were all taken"):
        eng.backend().create()
