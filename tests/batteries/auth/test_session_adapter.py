"""The ``session`` adapter: opaque tokens over the session battery's real stores."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from tests.ports import free_port
from toolkit_batteries.auth import InvalidTokenError, TokenExpiredError
from toolkit_batteries.auth.adapters.session import KIND, SessionAuthenticator
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ConfigurationError, ServiceUnavailableError

STORES = ("memory", "kvserver", "db")


def session_settings(store: str, request, tmp_path) -> dict:
    """Return ``TOOLKIT`` with the session auth adapter over the ``store`` session adapter."""
    if store == "kvserver":
        addr = request.getfixturevalue("redis_url")
        options = {"kvserver": {"addr": addr, "prefix": request.getfixturevalue("redis_prefix")}}
    elif store == "db":
        options = {"dsn": request.getfixturevalue("sqlite_dsn")}
    else:  # a memory session store is refused outside the development switch
        request.getfixturevalue("monkeypatch").setenv("TOOLKIT_ENV", "test")
        options = {}
    return {
        "auth": {"adapter": "session"},
        "session": {"adapter": store, "options": options},
    }


@pytest.fixture(params=STORES)
def session_auth(request, tmp_path, containers):
    settings = session_settings(request.param, request, tmp_path)
    container = Container(Config.load(settings, {}))
    containers.append(container)
    return container.auth()


def test_tokens_are_opaque_session_ids(session_auth):
    issued = session_auth.issue("user-1", roles=("member",), claims={"email": "a@example.com"})
    assert issued.token.count(".") == 0 and len(issued.token) >= 40
    assert issued.token_id != issued.token and len(issued.token_id) == 32
    record = session_auth.store.get(issued.token)
    assert record["kind"] == KIND and record["sub"] == "user-1"
    assert issued.token not in str(record)
    claims = session_auth.verify(issued.token)
    assert (claims.subject, claims.roles, claims.token_id) == (
        "user-1",
        ("member",),
        issued.token_id,
    )
    assert claims.extra["email"] == "a@example.com"
    assert abs(claims.expires_at - issued.expires_at) < timedelta(seconds=1)


def test_the_default_ttl_is_the_session_store_ttl(session_auth):
    issued = session_auth.issue("user-1")
    left = issued.expires_at - datetime.now(UTC)
    assert timedelta(minutes=14) < left <= timedelta(minutes=15)  # session ttl default 15m
    longer = session_auth.issue("user-1", ttl=timedelta(hours=2))
    assert longer.expires_at - datetime.now(UTC) > timedelta(minutes=119)


def test_revoke_deletes_the_session(session_auth):
    issued = session_auth.issue("user-1")
    session_auth.revoke(issued.token)
    assert session_auth.store.get(issued.token) is None
    with pytest.raises(InvalidTokenError):
        session_auth.verify(issued.token)
    session_auth.revoke(issued.token)  # revoking twice is harmless


@pytest.mark.parametrize(
    "token", ["", "short", "has space in it...........", "a.b.c", None, "é" * 40]
)
def test_malformed_tokens_are_invalid_without_a_store_lookup(session_auth, token):
    with pytest.raises(InvalidTokenError, match="malformed"):
        session_auth.verify(token)
    with pytest.raises(InvalidTokenError, match="malformed"):
        session_auth.revoke(token)


def test_other_sessions_are_not_tokens(session_auth):
    foreign = session_auth.store.create({"cart": [1, 2], "sub": "user-1", "exp": time.time() + 60})
    with pytest.raises(InvalidTokenError, match="not an auth token"):
        session_auth.verify(foreign)
    with pytest.raises(InvalidTokenError, match="not an auth token"):
        session_auth.revoke(foreign)
    assert session_auth.store.get(foreign)["cart"] == [1, 2]  # revoke left it alone


def test_expiry_is_token_expired_while_the_store_still_holds_it(session_auth):
    class Later:
        now = time.time() + 120

        def __call__(self):
            return self.now

    issued = session_auth.issue("user-1", ttl=timedelta(minutes=1))
    later = SessionAuthenticator(session_auth.store, clock=Later())
    with pytest.raises(TokenExpiredError):
        later.verify(issued.token)


def test_revocation_is_immediate_across_instances(redis_url, redis_prefix, containers):
    prefix = redis_prefix
    settings = {
        "auth": {"adapter": "session"},
        "session": {
            "adapter": "kvserver",
            "options": {"kvserver": {"addr": redis_url, "prefix": prefix}},
        },
    }
    first, second = (Container(Config.load(settings, {})) for _ in range(2))
    containers.extend([first, second])
    issued = first.auth().issue("user-1")
    assert second.auth().verify(issued.token).subject == "user-1"
    second.auth().revoke(issued.token)
    with pytest.raises(InvalidTokenError):
        first.auth().verify(issued.token)


def test_the_session_instance_named_like_the_auth_instance_is_used(containers, monkeypatch):
    monkeypatch.setenv("TOOLKIT_ENV", "test")
    settings = {
        "auth": {"web": {"adapter": "session"}, "api": {"adapter": "session"}},
        "session": {"web": {"adapter": "memory"}},
    }
    container = Container(Config.load(settings, {}))
    containers.append(container)
    assert container.auth("web").store is container.session("web")
    assert container.auth("api").store is container.session("default")


def test_open_fails_when_the_session_store_is_unreachable(containers):
    settings = {
        "auth": {"adapter": "session"},
        "session": {
            "adapter": "kvserver",
            "options": {"kvserver": {"addr": f"127.0.0.1:{free_port()}", "password": "hunter2"}},
        },
    }
    container = Container(Config.load(settings, {}))
    containers.append(container)
    with pytest.raises(ServiceUnavailableError) as caught:
        container.auth()
    assert caught.value.service == "auth" and "hunter2" not in str(caught.value)


def test_open_fails_without_a_usable_session_store(containers):
    container = Container(
        Config.load({"auth": {"adapter": "session"}, "session": {"adapter": "nope"}}, {})
    )
    containers.append(container)
    with pytest.raises(ConfigurationError, match="needs a usable session store"):
        container.auth()


def test_a_store_that_loses_data_is_refused_at_open():
    class Forgetful:
        ttl = timedelta(minutes=15)

        def create(self, data, *, ttl=None):
            return "x" * 43

        def get(self, session_id):
            return None

        def delete(self, session_id):
            pass

    auth = SessionAuthenticator(Forgetful())
    with pytest.raises(ConfigurationError, match="does not return the data"):
        auth.probe()
    with pytest.raises(ConfigurationError, match="with create"):
        SessionAuthenticator(object())


def test_a_store_outage_after_open_fails_closed(private_redis, containers):
    settings = {
        "auth": {"adapter": "session"},
        "session": {"adapter": "kvserver", "options": {"kvserver": {"addr": private_redis.addr}}},
    }
    container = Container(Config.load(settings, {}))
    containers.append(container)
    auth = container.auth()
    issued = auth.issue("user-1")
    assert auth.verify(issued.token).subject == "user-1"
    private_redis.stop()  # the real server goes away
    with pytest.raises(ServiceUnavailableError) as caught:
        auth.verify(issued.token)
    assert issued.token not in str(caught.value)
    with pytest.raises(ServiceUnavailableError):
        auth.issue("user-1")
    with pytest.raises(ServiceUnavailableError):
        auth.revoke(issued.token)
