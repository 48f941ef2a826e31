"""Issue 12 defect 10 (session): ``SessionStore.create`` never loops forever.

On the landed code ``create`` drew ids until one was free, with no bound: a store that
keeps answering "taken" (a broken random source, a faulty adapter) hung the request. Here
the ids really collide, on the real stores: the random source is pinned to one id, the
first ``create`` stores it, and the next one must give up after a few draws.
"""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ServiceUnavailableError
from toolkit_batteries.session import base

STUCK_ID = "s" * 43


@pytest.mark.parametrize("adapter", ["memory", "kvserver", "db"])
def test_session_create_gives_up_when_every_fresh_id_is_taken(adapter, request, monkeypatch):
    options: dict = {}
    if adapter == "kvserver":
        prefix = f"t-sec-{threading.get_ident()}-{id(request)}:"
        options = {"kvserver": {"addr": request.getfixturevalue("redis_url"), "prefix": prefix}}
    elif adapter == "db":
        options = {"dsn": request.getfixturevalue("sqlite_dsn")}
    container = Container(Config.load({"session": {"adapter": adapter, "options": options}}, {}))
    try:
        store = container.session()
        draws: list[int] = []

        def pinned() -> str:
            draws.append(1)
            return STUCK_ID

        monkeypatch.setattr(base, "new_session_id", pinned)
        assert store.create({"first": 1}) == STUCK_ID
        outcome: list[BaseException] = []

        def second() -> None:
            try:
                store.create({"second": 2})
            except BaseException as exc:  # reported below
                outcome.append(exc)

        worker = threading.Thread(target=second, daemon=True)
        worker.start()
        worker.join(10)  # bounded: on the landed code this thread never returned
        assert not worker.is_alive()
        (error,) = outcome
        assert isinstance(error, ServiceUnavailableError)
        assert STUCK_ID not in str(error)
        assert len(draws) == 1 + base.CREATE_ATTEMPTS
        assert store.get(STUCK_ID) == {"first": 1}  # the existing session is untouched
        store.delete(STUCK_ID)
    finally:
        container.close()


# ------------------------------------------------------------------ issue 29, item 3
#
# On the landed code rows of the ``db`` store carried no instance and the ``kvserver``
# keys none either, so ``session.admin`` read, extended and deleted the sessions of
# ``session.default`` on one table or server; and an ``auth`` token issued by
# ``auth.default`` verified at ``auth.admin`` over a shared store.

SCOPED_STORES = ("memory", "kvserver", "db-sqlite", "db-postgres")


def _two_instances(store: str, request) -> dict:
    """Return ``session.default`` and ``session.admin`` on one store (one table/server)."""
    if store == "memory":
        return {"adapter": "memory"}
    if store == "kvserver":
        prefix = f"t-scope-{uuid.uuid4().hex}:"
        request.addfinalizer(lambda: _drop_prefix(request, prefix))
        block = {"addr": request.getfixturevalue("redis_url"), "prefix": prefix}
        return {"adapter": "kvserver", "options": {"kvserver": block}}
    fixture = "sqlite_dsn" if store == "db-sqlite" else "postgres_dsn"
    dsn = request.getfixturevalue(fixture)
    if store == "db-postgres":
        from tests.batteries.session.conftest import empty_session_table

        request.addfinalizer(lambda: empty_session_table(dsn))
    return {"adapter": "db", "options": {"dsn": dsn}}


def _drop_prefix(request, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
    keys = list(client.scan_iter(match=f"{prefix}*", count=500))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.mark.parametrize("store", SCOPED_STORES)
def test_a_session_instance_never_sees_another_instances_sessions(store, request):
    block = _two_instances(store, request)
    config = Config.load({"session": {"default": block, "admin": block}}, {})
    with Container(config) as container:
        default, admin = container.session(), container.session("admin")
        sid = default.create({"user": "customer"}, ttl=timedelta(minutes=5))
        assert admin.get(sid) is None
        assert admin.exists(sid) is False
        assert admin.update(sid, {"user": "admin"}) is False
        assert admin.touch(sid) is False
        admin.delete(sid)
        assert default.get(sid) == {"user": "customer"}
        assert admin.purge_expired() == 0
        mine = admin.create({"user": "admin"})
        assert default.get(mine) is None and admin.get(mine) == {"user": "admin"}


@pytest.mark.parametrize("store", ["kvserver", "db-sqlite", "db-postgres"])
@pytest.mark.parametrize("own_session_instance", [False, True])
def test_a_token_of_one_auth_instance_is_refused_by_another(store, own_session_instance, request):
    from toolkit_batteries.auth import InvalidTokenError

    block = _two_instances(store, request)
    sessions = {"default": block, **({"admin": block} if own_session_instance else {})}
    auth = {"default": {"adapter": "session"}, "admin": {"adapter": "session"}}
    with Container(Config.load({"auth": auth, "session": sessions}, {})) as container:
        customer = container.auth().issue("customer-1", roles=("member",))
        assert container.auth().verify(customer.token).subject == "customer-1"
        with pytest.raises(InvalidTokenError):
            container.auth("admin").verify(customer.token)
        if own_session_instance:  # admin's own store does not hold it: nothing to revoke
            container.auth("admin").revoke(customer.token)
        else:  # the shared store holds it, and it is not admin's to revoke
            with pytest.raises(InvalidTokenError):
                container.auth("admin").revoke(customer.token)
        assert container.auth().verify(customer.token).subject == "customer-1"
        staff = container.auth("admin").issue("staff-1")
        assert container.auth("admin").verify(staff.token).subject == "staff-1"
        with pytest.raises(InvalidTokenError):
            container.auth().verify(staff.token)
