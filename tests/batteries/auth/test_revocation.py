"""Revocation stores: per-process memory by default, shared on a key-value server or session.

The shared stores run on the real Redis server (``kvserver``) and SQLite (``db``), each
test under a cache instance or key prefix of its own; the two-process test revokes in one
interpreter and verifies in others. Outages are a real private server, stopped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.test import override_settings

from tests.support.clock import FakeClock
from toolkit_batteries.auth import InvalidTokenError, TokenRevokedError
from toolkit_batteries.auth.adapters.jwt import JWTAuthenticator
from toolkit_batteries.auth.revocation import (
    KVServerRevocationStore,
    MemoryRevocationStore,
    RevocationStore,
    SessionRevocationStore,
    valid_token_id,
)
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ConfigurationError, ServiceUnavailableError

from .conftest import SECRET, craft, jwt_settings, payload

ROOT = Path(__file__).resolve().parents[3]


# --------------------------------------------------------------------------- memory


def test_memory_store_keeps_ids_until_their_time_then_forgets_them():
    clock = FakeClock(1_000_000.0)
    store = MemoryRevocationStore(clock=clock)
    assert isinstance(store, RevocationStore)
    store.revoke("a", clock.now + 10)
    store.revoke("b", clock.now + 100)
    store.revoke("a", clock.now + 5)  # an earlier time never shortens a revocation
    assert store.is_revoked("a") and store.is_revoked("b") and not store.is_revoked("c")
    clock.now += 11
    assert not store.is_revoked("a")
    assert len(store) == 1  # a lapsed id is dropped when looked up
    clock.now += MemoryRevocationStore.SWEEP_INTERVAL + 100
    store.revoke("c", clock.now + 1)  # a revoke past the sweep time sweeps lapsed ids
    assert len(store) == 1 and store.is_revoked("c")


def test_the_default_store_is_per_process(jwt_auth):
    first, second = jwt_auth(), jwt_auth()
    assert type(first.revocation_store) is MemoryRevocationStore
    token = craft(payload())
    first.revoke(token)
    with pytest.raises(TokenRevokedError):
        first.verify(token)
    assert second.verify(token).subject == "user-1"  # spec rule 6: others do not see it


@pytest.mark.parametrize(
    ("token_id", "valid"),
    [("0123abcd" * 4, True), ("a.b:c-d_e", True), ("", False), ("a b", False), ("x" * 129, False)],
)
def test_valid_token_ids(token_id, valid):
    assert valid_token_id(token_id) is valid


# --------------------------------------------------------------------------- shared stores


def revocation_key(token_id: str, instance: str = "default") -> str:
    """Return the key a kvserver revocation of ``token_id`` lives under."""
    return f"toolkit:auth:{instance}:revoked:{token_id}"


@pytest.fixture
def raw_redis(redis_url):
    """Yield a raw client on the test server; delete the revocation keys a test names."""
    import redis

    client = redis.Redis.from_url(redis_url)
    made: list[str] = []
    yield client, made
    if made:
        client.delete(*made)
    client.close()


@pytest.fixture
def cache_pair(redis_url):
    """Two containers (two "processes") on one kvserver cache instance of their own."""
    name = f"t-{uuid.uuid4().hex[:12]}"
    block = {"adapter": "kvserver", "options": {"url": redis_url}}
    settings = {**jwt_settings(), "cache": {name: block}}
    pair = [Container(Config.load(settings, {})) for _ in range(2)]
    try:
        with override_settings(TOOLKIT_AUTH_REVOCATION=f"cache:{name}"):
            yield [c.auth() for c in pair], pair[0].cache(name)
    finally:
        pair[0].cache(name).clear()
        for container in pair:
            container.close()


def test_a_cache_setting_shares_revocations_outside_the_cache_namespace(cache_pair, raw_redis):
    (first, second), cache = cache_pair
    client, made = raw_redis
    assert type(first.revocation_store) is KVServerRevocationStore
    issued = first.issue("user-1")
    made.append(revocation_key(issued.token_id))
    assert second.verify(issued.token).subject == "user-1"
    first.revoke(issued.token)
    with pytest.raises(TokenRevokedError):
        second.verify(issued.token)
    assert client.exists(revocation_key(issued.token_id)) == 1
    cache.clear()  # emptying the cache keeps the revocation
    with pytest.raises(TokenRevokedError):
        second.verify(issued.token)


@pytest.mark.parametrize("adapter", ["memory", "db"])
def test_a_cache_that_evicts_is_refused_naming_the_setting(adapter, containers, request):
    options = {"dsn": request.getfixturevalue("sqlite_dsn")} if adapter == "db" else {}
    settings = {**jwt_settings(), "cache": {"adapter": adapter, "options": options}}
    container = Container(Config.load(settings, {}))
    containers.append(container)
    with override_settings(TOOLKIT_AUTH_REVOCATION="cache"), pytest.raises(ConfigurationError) as e:
        container.auth()
    assert "TOOLKIT_AUTH_REVOCATION" in str(e.value) and f'"{adapter}" adapter' in str(e.value)


def test_kvserver_entries_expire_with_the_token(raw_redis):
    client, made = raw_redis
    prefix = f"t-{uuid.uuid4().hex}:"
    made.extend([prefix + "abc", prefix + "old"])
    store = KVServerRevocationStore(client, prefix=prefix)
    store.revoke("abc", time.time() + 90)
    assert store.is_revoked("abc") and not store.is_revoked("abd")
    assert 85_000 <= client.pttl(prefix + "abc") <= 90_000
    store.revoke("abc", time.time() + 10)  # an earlier time never shortens a revocation
    assert client.pttl(prefix + "abc") > 80_000
    store.revoke("old", time.time() - 1)  # already lapsed: nothing written
    assert client.exists(prefix + "old") == 0


def test_a_session_store_shares_revocations(redis_url, redis_prefix, containers):
    prefix = redis_prefix
    settings = {
        **jwt_settings(),
        "session": {
            "adapter": "kvserver",
            "options": {"kvserver": {"addr": redis_url, "prefix": prefix}},
        },
    }
    pair = [Container(Config.load(settings, {})) for _ in range(2)]
    containers.extend(pair)
    with override_settings(TOOLKIT_AUTH_REVOCATION="session"):
        first, second = (c.auth() for c in pair)
    assert type(first.revocation_store) is SessionRevocationStore
    issued = first.issue("user-1")
    first.revoke(issued.token)
    with pytest.raises(TokenRevokedError):
        second.verify(issued.token)
    marker = f"tkrv_{issued.token_id}"
    assert pair[0].session().get(marker)["kind"] == SessionRevocationStore.KIND
    pair[0].session().delete(marker)
    assert second.verify(issued.token).subject == "user-1"


# --------------------------------------------------------------------------- choosing a store


def build_store(ctx):
    """Build the store a dotted path in TOOLKIT_AUTH_REVOCATION names."""
    store = MemoryRevocationStore()
    store.opened_for = ctx.instance
    return store


def test_the_setting_picks_a_store_per_instance(containers, redis_url):
    settings = {
        "auth": {"default": jwt_settings()["auth"], "partners": jwt_settings()["auth"]},
        "cache": {"adapter": "kvserver", "options": {"url": redis_url}},
    }
    path = f"{__name__}.build_store"
    with override_settings(TOOLKIT_AUTH_REVOCATION={"default": "cache", "partners": path}):
        container = Container(Config.load(settings, {}))
        containers.append(container)
        default, partners = container.auth(), container.auth("partners")
    assert type(default.revocation_store) is KVServerRevocationStore
    assert default.revocation_store.prefix == "toolkit:auth:default:revoked:"
    assert partners.revocation_store.opened_for == "partners"
    with override_settings(TOOLKIT_AUTH_REVOCATION="memory"):
        container = Container(Config.load(jwt_settings(), {}))
        containers.append(container)
        assert type(container.auth().revocation_store) is MemoryRevocationStore


@pytest.mark.parametrize(
    "value", ["redis", "cache.py:x", "tests.no_such_module.factory", 42, "json.dumps"]
)
def test_a_bad_setting_fails_at_open_naming_the_setting(value, containers):
    with override_settings(TOOLKIT_AUTH_REVOCATION=value):
        container = Container(Config.load(jwt_settings(), {}))
        containers.append(container)
        with pytest.raises((ConfigurationError, TypeError)) as caught:
            container.auth()
    if isinstance(caught.value, ConfigurationError):
        assert "TOOLKIT_AUTH_REVOCATION" in str(caught.value)


def test_with_revocation_store_returns_a_copy_using_the_store(jwt_auth):
    original = jwt_auth()
    shared = MemoryRevocationStore()
    copy = original.with_revocation_store(shared)
    assert copy.revocation_store is shared and original.revocation_store is not shared
    token = craft(payload())
    copy.revoke(token)
    assert shared.is_revoked(jwt_decode_jti(token))
    assert original.verify(token).subject == "user-1"
    with pytest.raises(TypeError):
        original.with_revocation_store(object())


def jwt_decode_jti(token: str) -> str:
    import jwt

    return jwt.decode(token, SECRET, algorithms=["HS256"])["jti"]


def test_a_stopped_store_server_fails_closed(jwt_auth, caplog):
    import redis

    from tests.batteries.ratelimit.private_redis import PrivateRedis

    password = "hunter2-" + uuid.uuid4().hex
    server = PrivateRedis()
    server.start()
    try:
        redis.Redis(host="127.0.0.1", port=server.port).config_set("requirepass", password)
        client = redis.Redis(host="127.0.0.1", port=server.port, password=password)
        auth = jwt_auth().with_revocation_store(KVServerRevocationStore(client, prefix="r:"))
        token = craft(payload())
        assert auth.verify(token).subject == "user-1"
    finally:
        server.stop()  # the real server goes away
    with pytest.raises(ServiceUnavailableError) as caught:
        auth.verify(token)
    assert password not in str(caught.value)
    with pytest.raises(ServiceUnavailableError):
        auth.revoke(token)
    assert any("revocation store failed" in r.getMessage() for r in caplog.records)
    assert all(password not in r.getMessage() for r in caplog.records)
    client.close()


def test_revoke_refuses_tokens_it_would_not_accept_before_touching_the_store(jwt_auth):
    store = MemoryRevocationStore()
    auth = jwt_auth().with_revocation_store(store)
    with pytest.raises(InvalidTokenError):
        auth.revoke(craft(payload(), "x" * 40))
    assert len(store) == 0


# --------------------------------------------------------------------------- two processes


def run_child(action: str, tokens: list[str], env: dict[str, str]) -> list[dict]:
    """Run ``twoproc_child.py`` in a fresh interpreter; tokens go through stdin."""
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("twoproc_child.py")), action],
        input="\n".join(tokens),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    for token in tokens:
        assert token not in completed.stdout and token not in completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_revoked_in_one_process_is_refused_in_another(redis_url):
    cache_name = f"t-{uuid.uuid4().hex[:12]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.batteries.auth.twoproc_settings",
        "PYTHONPATH": str(ROOT),
        "TEST_AUTH_CACHE_INSTANCE": cache_name,
        "TEST_AUTH_REDIS_URL": redis_url,
        "AUTH__DEFAULT__JWT_SECRET": SECRET,
    }
    settings = {
        **jwt_settings(),
        "cache": {cache_name: {"adapter": "kvserver", "options": {"url": redis_url}}},
    }
    container = Container(Config.load(settings, {}))
    try:
        with override_settings(TOOLKIT_AUTH_REVOCATION=f"cache:{cache_name}"):
            here = container.auth()
        kept, revoked_here = here.issue("user-1"), here.issue("user-2")
        here.revoke(revoked_here.token)  # revoked in this process ...

        seen = run_child("verify", [kept.token, revoked_here.token], env)
        assert seen == [  # ... refused in the other; the untouched token still verifies
            {"ok": True, "subject": "user-1", "store": "KVServerRevocationStore"},
            {"error": "TokenRevokedError"},
        ]

        assert run_child("revoke", [kept.token], env) == [  # revoked over there ...
            {"ok": True, "store": "KVServerRevocationStore"}
        ]
        with pytest.raises(TokenRevokedError):
            here.verify(kept.token)  # ... refused here
    finally:
        store = here.revocation_store
        store.client.delete(*(revocation_key(i.token_id) for i in (kept, revoked_here)))
        container.close()


def test_a_jwt_authenticator_built_in_code_takes_a_store():
    options = Config.load(jwt_settings(), {}).service("auth").options.jwt
    store = MemoryRevocationStore()
    auth = JWTAuthenticator(options, revocation=store)
    token = auth.issue("u").token
    auth.revoke(token)
    assert len(store) == 1


def test_session_markers_keep_distinct_ids_apart(containers):
    container = Container(Config.load({"session": {"adapter": "memory"}}, {}))
    containers.append(container)
    sessions = container.session()
    store = SessionRevocationStore(sessions)
    store.revoke("a.b", time.time() + 60)
    assert store.is_revoked("a.b")
    assert not store.is_revoked("a_b") and not store.is_revoked("a:b")
    store.revoke("plain-id_1", time.time() + 60)
    assert sessions.get("tkrv_plain-id_1")["kind"] == SessionRevocationStore.KIND
    store.revoke("lapsed", time.time() - 1)
    assert not store.is_revoked("lapsed")


def test_revocations_in_a_db_session_store_are_rows_of_the_session_model(sqlite_dsn, containers):
    from toolkit_batteries.session.models import SessionRecord

    settings = {**jwt_settings(), "session": {"adapter": "db", "options": {"dsn": sqlite_dsn}}}
    pair = [Container(Config.load(settings, {})) for _ in range(2)]
    containers.extend(pair)
    with override_settings(TOOLKIT_AUTH_REVOCATION="session"):
        first, second = (c.auth() for c in pair)
    issued = first.issue("user-1")
    first.revoke(issued.token)
    with pytest.raises(TokenRevokedError):
        second.verify(issued.token)
    alias = pair[0].session().database.alias
    row = SessionRecord.objects.using(alias).get(id=f"tkrv_{issued.token_id}")
    assert json.loads(row.data)["kind"] == SessionRevocationStore.KIND
