"""One contract for every auth adapter: verify, refuse, revoke behave alike.

``jwt`` mints its own tokens; ``session`` runs over the session battery's memory store,
the real Redis server and SQLite; ``oidc`` gets its tokens from the local OpenID
provider's token endpoint (it cannot issue).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from toolkit_batteries.auth import Authenticator, AuthError, Claims, InvalidTokenError
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .conftest import jwt_settings
from .provider import CLIENT_ID

VARIANTS = ("jwt", "session-memory", "session-kvserver", "session-db", "oidc")


@dataclass
class Opened:
    variant: str
    auth: Authenticator
    container: Container
    #: mint(subject, roles) -> token, the way this adapter's tokens come to exist.
    mint: Callable[[str, tuple[str, ...]], str]


def settings_for(variant: str, request: Any, tmp_path: Any) -> dict:
    if variant == "jwt":
        return jwt_settings()
    if variant == "oidc":
        issuer = request.getfixturevalue("provider").issuer
        options = {"issuer": issuer, "client_id": CLIENT_ID, "allow_insecure": True}
        return {"auth": {"adapter": "oidc", "options": {"oidc": options}}}
    store = variant.split("-")[1]
    options: dict[str, Any] = {}
    if store == "kvserver":
        prefix = request.getfixturevalue("redis_prefix")
        options = {"kvserver": {"addr": request.getfixturevalue("redis_url"), "prefix": prefix}}
    elif store == "db":
        options = {"dsn": request.getfixturevalue("sqlite_dsn")}
    else:  # a memory session store is refused outside the development switch
        request.getfixturevalue("monkeypatch").setenv("TOOLKIT_ENV", "test")
    return {"auth": {"adapter": "session"}, "session": {"adapter": store, "options": options}}


@pytest.fixture(params=VARIANTS)
def opened(request, tmp_path):
    container = Container(Config.load(settings_for(request.param, request, tmp_path), {}))
    auth = container.auth()
    if request.param == "oidc":
        provider = request.getfixturevalue("provider")

        def mint(subject: str, roles: tuple[str, ...]) -> str:
            return provider.request_token(sub=subject, roles=list(roles))
    else:

        def mint(subject: str, roles: tuple[str, ...]) -> str:
            return auth.issue(subject, roles=roles).token

    try:
        yield Opened(request.param, auth, container, mint)
    finally:
        container.close()


class TestAuthContract:
    """Run against jwt, session (memory, kvserver, db) and oidc."""

    def test_identity(self, opened):
        assert isinstance(opened.auth, Authenticator)
        assert opened.auth.service_name == "auth"
        assert opened.auth.adapter_name == opened.variant.split("-")[0]
        assert opened.container.auth() is opened.auth

    def test_verify_returns_the_claims(self, opened):
        token = opened.mint("alice", ("admin", "member"))
        claims = opened.auth.verify(token)
        assert isinstance(claims, Claims)
        assert claims.subject == "alice"
        assert claims.roles == ("admin", "member")
        assert claims.expires_at > datetime.now(UTC)
        assert claims.token_id and claims.token_id != token

    def test_verify_is_repeatable(self, opened):
        token = opened.mint("alice", ())
        assert opened.auth.verify(token) == opened.auth.verify(token)

    @pytest.mark.parametrize("garbage", ["", "x", "a.b.c", "Bearer abc", "🙂" * 50])
    def test_garbage_is_invalid(self, opened, garbage):
        with pytest.raises(InvalidTokenError):
            opened.auth.verify(garbage)

    def test_revoke_refuses_later_verifies_and_is_idempotent(self, opened):
        token, other = opened.mint("alice", ()), opened.mint("bob", ())
        opened.auth.revoke(token)
        with pytest.raises(InvalidTokenError):
            opened.auth.verify(token)
        opened.auth.revoke(token)
        assert opened.auth.verify(other).subject == "bob"

    def test_errors_never_contain_the_token(self, opened):
        token = opened.mint("alice", ())
        opened.auth.revoke(token)
        with pytest.raises(AuthError) as caught:
            opened.auth.verify(token)
        assert token not in str(caught.value) and token not in repr(caught.value)
        assert token not in repr(opened.auth)
