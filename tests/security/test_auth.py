"""Issue 12 defects 3, 7, 10 and 11 (auth): revocations and tokens never fail open.

Each test fails on the landed code: revocations lived in the cache's namespace (gone with
``cache.clear()``) or in an evicting memory cache; an OIDC token whose ``kid`` was not a
string raised ``TypeError`` (a 500); an unknown ``kid`` held a lock for the whole JWKS
refetch while every other unknown-kid verification queued behind it; OIDC had no leeway
and ``jwt.leeway`` no upper bound; the ``session`` adapter over a per-process memory store
opened silently in production. Real servers throughout: the shared Redis, a private Redis
the test configures, and a local OpenID provider on 127.0.0.1.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import jwt
import pytest
import redis
from django.test import Client, override_settings

from tests.batteries.auth.conftest import jwt_settings
from tests.batteries.auth.provider import CLIENT_ID, FakeProvider
from tests.batteries.ratelimit.private_redis import PrivateRedis
from tests.support.processes import serving
from toolkit_batteries import services
from toolkit_batteries.auth import InvalidTokenError, TokenExpiredError, TokenRevokedError
from toolkit_batteries.auth.adapters import oidc as oidc_module
from toolkit_batteries.auth.adapters.oidc import OIDCAuthenticator
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError

SETTING = "TOOLKIT_AUTH_REVOCATION"


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    yield from serving(FakeProvider())


def _oidc_options(provider: FakeProvider, **extra: str):
    oidc = {"issuer": provider.issuer, "client_id": CLIENT_ID, "allow_insecure": True, **extra}
    return Config.load({"auth": {"adapter": "oidc", "options": {"oidc": oidc}}}, {})


def _open(toolkit: dict, opened: list[Container]) -> Container:
    container = Container(Config.load(toolkit, {}))
    opened.append(container)
    return container


@pytest.fixture
def opened() -> Iterator[list[Container]]:
    found: list[Container] = []
    yield found
    for container in found:
        container.close()


# --------------------------------------------------------------------------- defect 3


def test_a_revocation_survives_clearing_the_cache(redis_url, opened):
    name = f"t-{uuid.uuid4().hex[:12]}"
    toolkit = {
        **jwt_settings(),
        "cache": {name: {"adapter": "kvserver", "options": {"url": redis_url}}},
    }
    container = _open(toolkit, opened)
    with override_settings(**{SETTING: f"cache:{name}"}):
        auth = container.auth()
    issued = auth.issue("user-1")
    raw = redis.Redis.from_url(redis_url)
    try:
        auth.revoke(issued.token)
        container.cache(name).clear()  # an operator empties the cache
        with pytest.raises(TokenRevokedError):
            auth.verify(issued.token)
    finally:
        raw.delete(f"toolkit:auth:default:revoked:{issued.token_id}")
        raw.close()


def test_an_evicting_memory_cache_is_refused_as_the_revocation_store(opened):
    container = _open({**jwt_settings(), "cache": {"adapter": "memory"}}, opened)
    with override_settings(**{SETTING: "cache"}), pytest.raises(ConfigurationError) as caught:
        container.auth()
    assert SETTING in str(caught.value) and "evicts" in str(caught.value)


def test_a_redis_that_may_evict_keys_is_refused_as_the_revocation_store(opened):
    server = PrivateRedis()
    server.start()
    try:
        admin = redis.Redis(host="127.0.0.1", port=server.port)
        admin.config_set("maxmemory", "64mb")
        admin.config_set("maxmemory-policy", "allkeys-lru")
        admin.close()
        block = {"adapter": "kvserver", "options": {"url": server.url}}
        container = _open({**jwt_settings(), "cache": block}, opened)
        with override_settings(**{SETTING: "cache"}), pytest.raises(ConfigurationError) as caught:
            container.auth()
        assert SETTING in str(caught.value) and "allkeys-lru" in str(caught.value)
        session = {"adapter": "kvserver", "options": {"kvserver": {"addr": server.addr}}}
        container = _open({**jwt_settings(), "session": session}, opened)
        with override_settings(**{SETTING: "session"}), pytest.raises(ConfigurationError):
            container.auth()
    finally:
        server.stop()


# --------------------------------------------------------------------------- defect 7


@pytest.mark.urls("tests.batteries.auth.urls")
@pytest.mark.parametrize("kid", [{"a": 1}, ["rsa-1"], 7])
def test_an_oidc_token_with_a_non_string_kid_answers_401_not_500(provider, kid):
    toolkit = {
        "auth": {
            "adapter": "oidc",
            "options": {
                "oidc": {"issuer": provider.issuer, "client_id": CLIENT_ID, "allow_insecure": True}
            },
        }
    }
    token = _rs256_by_hand({"alg": "RS256", "typ": "JWT", "kid": kid}, provider)
    rest = {"EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler"}
    try:
        with override_settings(TOOLKIT=toolkit, REST_FRAMEWORK=rest):
            client = Client(raise_request_exception=False)
            for route in ("/api/me", "/plain/me"):
                response = client.get(route, HTTP_AUTHORIZATION=f"Bearer {token}")
                assert response.status_code == 401, (route, response.status_code)
    finally:
        services.reset()


def _rs256_by_hand(header: dict, provider: FakeProvider) -> str:
    """Sign a token whose header pyjwt refuses to encode (a non-string ``kid``)."""
    import base64
    import json

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    def part(data: object) -> str:
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    signing_input = f"{part(header)}.{part(provider.id_token_claims())}"
    signature = provider.rsa_key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


def test_a_jwks_refetch_never_makes_other_verifications_wait(provider):
    class Clock:
        now = time.time()

        def __call__(self) -> float:
            return self.now

    clock = Clock()
    auth = OIDCAuthenticator(_oidc_options(provider).service("auth").options.oidc, clock=clock)
    clock.now += oidc_module.REFRESH_INTERVAL  # a refetch is allowed again
    provider.keys["rsa-rotated"] = ("RS256", provider.rsa_key)
    rotated = jwt.encode(
        provider.id_token_claims(sub="rotated"),
        provider.rsa_key,
        algorithm="RS256",
        headers={"kid": "rsa-rotated"},
    )
    stranger = jwt.encode(
        provider.id_token_claims(), provider.rsa_key, algorithm="RS256", headers={"kid": "never"}
    )
    known = provider.sign(provider.id_token_claims(sub="known"))
    fetched = provider.requests["/jwks"]
    provider.jwks_gate = gate = threading.Event()  # the provider hangs on the JWKS
    results: dict[str, object] = {}

    def verify(name: str, token: str) -> None:
        try:
            results[name] = auth.verify(token).subject
        except InvalidTokenError as exc:
            results[name] = str(exc)

    slow = threading.Thread(target=verify, args=("rotated", rotated))
    try:
        slow.start()
        deadline = time.monotonic() + 5
        while provider.requests["/jwks"] == fetched and time.monotonic() < deadline:
            time.sleep(0.01)
        assert provider.requests["/jwks"] == fetched + 1  # the refetch is in flight
        others = [
            threading.Thread(target=verify, args=("stranger", stranger)),
            threading.Thread(target=verify, args=("known", known)),
        ]
        for thread in others:
            thread.start()
        for thread in others:
            thread.join(2)  # bounded: on the landed code the stranger queued for 10 s
        assert not any(thread.is_alive() for thread in others)
        assert results == {"stranger": "unknown kid", "known": "known"}
    finally:
        gate.set()
        provider.jwks_gate = None
        slow.join(15)
        del provider.keys["rsa-rotated"]
    assert results["rotated"] == "rotated"  # the one that refetched got the new key


def test_oidc_leeway_tolerates_clock_skew_within_its_bound(provider):
    now = int(time.time())
    late = provider.sign(provider.id_token_claims(exp=now - 30))
    strict = OIDCAuthenticator(_oidc_options(provider).service("auth").options.oidc)
    with pytest.raises(TokenExpiredError):
        strict.verify(late)
    skewed = _oidc_options(provider, leeway="60s").service("auth").options.oidc
    assert OIDCAuthenticator(skewed).verify(late).subject == "oidc-user"
    beyond = provider.sign(provider.id_token_claims(exp=now - 120))
    with pytest.raises(TokenExpiredError):
        OIDCAuthenticator(skewed).verify(beyond)
    too_long = _oidc_options(provider, leeway="6m").service("auth").options.oidc
    with pytest.raises(InvalidOptionsError, match=r"oidc\.leeway"):
        OIDCAuthenticator(too_long)


# --------------------------------------------------------------------------- defect 10


@pytest.mark.parametrize("leeway", ["301s", "1h", "30d"])
def test_a_jwt_leeway_over_five_minutes_is_refused(leeway, opened):
    container = _open(jwt_settings(leeway=leeway), opened)
    with pytest.raises(InvalidOptionsError) as caught:
        container.auth()
    assert 'option "jwt.leeway"' in str(caught.value) and leeway not in str(caught.value)


# --------------------------------------------------------------------------- defect 11


def test_the_session_adapter_over_a_memory_store_fails_closed_outside_development(
    monkeypatch, opened
):
    toolkit = {"auth": {"adapter": "session"}, "session": {"adapter": "memory"}}
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    with pytest.raises(ConfigurationError) as caught:
        _open(toolkit, opened).auth()
    assert "shared session store" in str(caught.value)
    assert "SESSION__DEFAULT__ADAPTER" in str(caught.value)
    monkeypatch.setenv("TOOLKIT_ENV", "development")  # the development switch
    auth = _open(toolkit, opened).auth()
    assert auth.verify(auth.issue("dev").token).subject == "dev"


def test_the_session_adapter_over_a_shared_store_opens_in_production(
    monkeypatch, opened, redis_url
):
    prefix = f"t-{uuid.uuid4().hex}:"
    session = {
        "adapter": "kvserver",
        "options": {"kvserver": {"addr": redis_url, "prefix": prefix}},
    }
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    auth = _open({"auth": {"adapter": "session"}, "session": session}, opened).auth()
    issued = auth.issue("prod")
    assert auth.verify(issued.token).subject == "prod"
    auth.revoke(issued.token)
