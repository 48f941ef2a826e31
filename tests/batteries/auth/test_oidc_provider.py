"""The ``oidc`` adapter against node ``oidc-provider``, a certified OpenID provider.

``test_oidc.py`` pins the adapter's rules against a provider this suite wrote; here every
ID token comes from a provider we did not write, through the real authorization-code flow
(:mod:`tests.support.oidc_provider`): discovery, JWKS, key rotation and expiry are that
provider's. Forged tokens (``alg`` confusion, ``none``, a changed payload) are made by the
test from a real token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator

import jwt
import pytest

from tests.support.oidc_provider import CLIENT_ID, OIDCProvider
from tests.support.processes import wait_until
from toolkit_batteries.auth import InvalidTokenError, TokenExpiredError
from toolkit_batteries.auth.adapters import oidc as oidc_module
from toolkit_batteries.core.errors import ServiceUnavailableError


def settings(issuer: str, client_id: str = CLIENT_ID) -> dict:
    options = {"issuer": issuer, "client_id": client_id, "allow_insecure": True}
    return {"auth": {"adapter": "oidc", "options": {"oidc": options}}}


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OIDCProvider]:
    with OIDCProvider(tmp_path_factory.mktemp("oidc")) as running:
        yield running


def test_an_id_token_from_the_code_flow_verifies(provider, open_auth):
    auth = open_auth(settings(provider.issuer))
    token = provider.id_token("alice")
    claims = auth.verify(token)
    assert claims.subject == "alice"
    assert claims.extra["iss"] == provider.issuer and claims.extra["aud"] == CLIENT_ID


def test_a_token_for_another_client_is_refused(provider, open_auth):
    auth = open_auth(settings(provider.issuer, client_id="another-app"))
    with pytest.raises(InvalidTokenError):
        auth.verify(provider.id_token("alice"))


def test_an_issuer_that_is_not_the_providers_is_refused_at_open(provider, open_auth):
    # The same server under another name: its discovery document names its real issuer.
    other_name = provider.issuer.replace("127.0.0.1", "localhost")
    with pytest.raises(ServiceUnavailableError, match="names another issuer"):
        open_auth(settings(other_name))


def forged(token: str, *, header: dict | None = None, payload: dict | None = None) -> str:
    head, body, signature = token.split(".")

    def encode(data: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    if header is not None:
        head = encode(header)
    if payload is not None:
        body = encode(payload)
    return f"{head}.{body}.{signature}"


def test_a_changed_payload_is_refused(provider, open_auth):
    auth = open_auth(settings(provider.issuer))
    token = provider.id_token("alice")
    claims = jwt.decode(token, options={"verify_signature": False})
    with pytest.raises(InvalidTokenError):
        auth.verify(forged(token, payload={**claims, "sub": "admin"}))


def test_alg_confusion_and_none_are_refused(provider, open_auth):
    auth = open_auth(settings(provider.issuer))
    token = provider.id_token("alice")
    claims = jwt.decode(token, options={"verify_signature": False})
    kid = jwt.get_unverified_header(token)["kid"]
    # HS256 keyed with the provider's public key: the classic RS256/HS256 confusion.
    public_pem = provider.public_key_pem(kid)
    confused = forged(
        token, header={"alg": "HS256", "kid": kid, "typ": "JWT"}, payload={**claims, "sub": "root"}
    )
    head, body, _ = confused.split(".")
    mac = hmac.new(public_pem, f"{head}.{body}".encode(), hashlib.sha256).digest()
    confused = f"{head}.{body}." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
    unsigned = forged(token, header={"alg": "none", "kid": kid}).rsplit(".", 1)[0] + "."
    for bad in (confused, unsigned):
        with pytest.raises(InvalidTokenError):
            auth.verify(bad)


def test_a_rotated_signing_key_is_fetched_once_its_kid_appears(tmp_path, open_auth, monkeypatch):
    monkeypatch.setattr(oidc_module, "REFRESH_INTERVAL", 0.0)  # no rate limit between fetches
    with OIDCProvider(tmp_path) as provider:
        auth = open_auth(settings(provider.issuer))
        before = provider.id_token("alice")
        assert auth.verify(before).subject == "alice"
        provider.rotate("key-2", keep_old=True)
        after = provider.id_token("bob")
        assert jwt.get_unverified_header(after)["kid"] == "key-2"
        assert auth.verify(after).subject == "bob"  # unknown kid -> JWKS fetched again
        assert auth.verify(before).subject == "alice"  # the retired key is still published


def test_a_kid_the_provider_never_published_is_refused(provider, open_auth):
    auth = open_auth(settings(provider.issuer))
    token = provider.id_token("alice")
    header = {**jwt.get_unverified_header(token), "kid": "not-a-key-of-this-provider"}
    with pytest.raises(InvalidTokenError):
        auth.verify(forged(token, header=header))


def test_an_expired_id_token_is_refused(tmp_path, open_auth):
    with OIDCProvider(tmp_path, id_token_ttl=2) as provider:
        auth = open_auth(settings(provider.issuer))
        token = provider.id_token("alice")
        expires = jwt.decode(token, options={"verify_signature": False})["exp"]
        assert expires - time.time() <= 3
        assert auth.verify(token).subject == "alice"
        assert wait_until(lambda: time.time() > expires + 0.5, timeout=30)
        with pytest.raises(TokenExpiredError):
            auth.verify(token)
