"""Shared helpers of the auth tests: secrets, token crafting, containers, a local OpenID provider.

Tokens for the rule tests are crafted with pyjwt directly, never with the adapter under
test, so a refusal proves the adapter's rule and not a quirk of its own issuer.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import uuid
from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from tests.support.batteries import BatteryOpener
from tests.support.processes import serving
from toolkit_batteries.core.container import Container

from .provider import FakeProvider

#: Distinctive secrets (>= 32 bytes), so a leak is easy to spot in logs and messages.
SECRET = "legacy-" + secrets.token_urlsafe(32)
OLD_SECRET = "old-key-" + secrets.token_urlsafe(32)
NEW_SECRET = "new-key-" + secrets.token_urlsafe(32)


def payload(**overrides: Any) -> dict[str, Any]:
    """Return a valid claim set (5 minutes left); ``None`` values remove a claim."""
    now = int(time.time())
    claims: dict[str, Any] = {
        "sub": "user-1",
        "iat": now,
        "exp": now + 300,
        "jti": uuid.uuid4().hex,
    }
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


def craft(
    claims: dict[str, Any],
    key: Any = SECRET,
    algorithm: str = "HS256",
    headers: dict[str, Any] | None = None,
) -> str:
    """Sign ``claims`` with pyjwt directly."""
    return jwt.encode(claims, key, algorithm=algorithm, headers=headers)


def hs256(header: dict[str, Any], claims: Any, key: str = SECRET) -> str:
    """Sign by hand (pyjwt refuses to encode some malformed headers and claims)."""

    def part(data: Any) -> str:
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    signing_input = f"{part(header)}.{part(claims)}"
    digest = hmac.new(key.encode(), signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(digest).rstrip(b'=').decode()}"


def jwt_settings(**jwt_options: Any) -> dict[str, Any]:
    """Return ``TOOLKIT`` selecting the jwt adapter (``secret`` defaults to :data:`SECRET`)."""
    jwt_options.setdefault("secret", SECRET)
    return {"auth": {"adapter": "jwt", "options": {"jwt": jwt_options}}}


@pytest.fixture
def containers(open_battery: BatteryOpener) -> list[Container]:
    """Containers a test opens by hand; closed at teardown with those ``open_battery`` opened."""
    return open_battery.containers


@pytest.fixture
def open_auth(open_battery: BatteryOpener):
    """Open ``auth`` from settings through a Container: ``open_auth(settings, environ)``."""

    def opener(settings: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
        return open_battery("auth", settings=settings, environ=environ)

    return opener


@pytest.fixture
def jwt_auth(open_auth):
    """Open a jwt authenticator: ``jwt_auth(leeway="30s", ...)``."""

    def opener(**jwt_options: Any) -> Any:
        return open_auth(jwt_settings(**jwt_options))

    return opener


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    """Run a local OpenID provider on 127.0.0.1 for the module's tests."""
    yield from serving(FakeProvider())
