"""The ``oidc`` adapter against a local OpenID provider on 127.0.0.1.

The provider is http on loopback, so these tests set ``oidc.allow_insecure``; the tests at
the end show that without it both the http scheme and the loopback host are refused.
"""

from __future__ import annotations

import socket
import time

import jwt
import pytest

from tests.support.clock import FakeClock
from toolkit_batteries.auth import (
    InvalidTokenError,
    TokenExpiredError,
    TokenRevokedError,
    UnsupportedOperationError,
)
from toolkit_batteries.auth.adapters import oidc as oidc_module
from toolkit_batteries.auth.adapters.oidc import OIDCAuthenticator
from toolkit_batteries.auth.policy import check_url
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import InvalidOptionsError, ServiceUnavailableError

from .conftest import SECRET
from .provider import CLIENT_ID


def oidc_settings(issuer: str, **options) -> dict:
    options = {"issuer": issuer, "client_id": CLIENT_ID, "allow_insecure": True, **options}
    return {"auth": {"adapter": "oidc", "options": {"oidc": options}}}


@pytest.fixture
def oidc(provider, open_auth):
    provider.discovery_overrides.clear()
    return open_auth(oidc_settings(provider.issuer))


# --------------------------------------------------------------------------- verification


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_id_tokens_from_the_token_endpoint_verify(oidc, provider, alg):
    token = provider.request_token(sub="alice", alg=alg, roles=["admin"], email="a@example.com")
    assert jwt.get_unverified_header(token)["alg"] == alg
    claims = oidc.verify(token)
    assert claims.subject == "alice" and claims.roles == ("admin",)
    assert claims.extra["email"] == "a@example.com"
    assert claims.extra["iss"] == provider.issuer and claims.extra["aud"] == CLIENT_ID
    assert claims.token_id == jwt.decode(token, options={"verify_signature": False})["jti"]


def test_an_audience_list_containing_the_client_id_verifies(oidc, provider):
    token = provider.sign(provider.id_token_claims(aud=["other", CLIENT_ID], azp=CLIENT_ID))
    assert oidc.verify(token).subject == "oidc-user"
    with pytest.raises(InvalidTokenError, match="authorized party"):
        oidc.verify(provider.sign(provider.id_token_claims(aud=["other", CLIENT_ID], azp="other")))


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"aud": "someone-else"}, "audience"),
        ({"aud": None}, "audience"),
        ({"iss": "https://evil.example"}, "issuer"),
        ({"iss": None}, "issuer"),
        ({"exp": None}, "exp"),
        ({"sub": ""}, "subject"),
        ({"nbf": int(time.time()) + 600}, "nbf"),
    ],
)
def test_claim_rules_refuse_signed_tokens(oidc, provider, fields, reason):
    with pytest.raises(InvalidTokenError, match=reason):
        oidc.verify(provider.sign(provider.id_token_claims(**fields)))


def test_an_expired_id_token_is_token_expired(oidc, provider):
    with pytest.raises(TokenExpiredError):
        oidc.verify(provider.sign(provider.id_token_claims(exp=int(time.time()) - 5)))


def test_only_rs256_and_es256_are_accepted(oidc, provider):
    claims = provider.id_token_claims()
    with pytest.raises(InvalidTokenError, match="algorithm"):
        oidc.verify(jwt.encode(claims, SECRET, algorithm="HS256", headers={"kid": "rsa-1"}))
    with pytest.raises(InvalidTokenError, match="algorithm"):
        oidc.verify(jwt.encode(claims, None, algorithm="none"))
    # A header claiming ES256 for the RSA key is refused before any verification.
    with pytest.raises(InvalidTokenError, match="does not match"):
        oidc.verify(
            jwt.encode(claims, provider.ec_key, algorithm="ES256", headers={"kid": "rsa-1"})
        )


def test_a_tampered_or_foreign_signature_is_refused(oidc, provider):
    token = provider.sign(provider.id_token_claims())
    head, body, signature = token.split(".")
    with pytest.raises(InvalidTokenError, match="signature"):
        middle = len(signature) // 2
        flipped = "A" if signature[middle] != "A" else "B"
        oidc.verify(f"{head}.{body}.{signature[:middle]}{flipped}{signature[middle + 1 :]}")
    from cryptography.hazmat.primitives.asymmetric import rsa

    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(
        provider.id_token_claims(), stranger, algorithm="RS256", headers={"kid": "rsa-1"}
    )
    with pytest.raises(InvalidTokenError, match="signature"):
        oidc.verify(forged)


def test_an_unknown_kid_refetches_the_jwks_at_most_once_per_interval(provider, open_auth):
    provider.discovery_overrides.clear()
    clock = FakeClock(time.time())
    options = Config.load(oidc_settings(provider.issuer), {}).service("auth").options.oidc
    auth = OIDCAuthenticator(options, clock=clock)
    fetched = provider.requests["/jwks"]
    provider.keys["rsa-2"] = ("RS256", provider.rsa_key)
    try:
        token = provider.sign(provider.id_token_claims(), kid="rsa-2")
        with pytest.raises(InvalidTokenError, match="unknown kid"):
            auth.verify(token)  # opened a moment ago: no refetch yet
        assert provider.requests["/jwks"] == fetched
        clock.now += oidc_module.REFRESH_INTERVAL
        assert auth.verify(token).subject == "oidc-user"  # the rotated key is fetched
        assert provider.requests["/jwks"] == fetched + 1
        stranger = jwt.encode(
            provider.id_token_claims(),
            provider.rsa_key,
            algorithm="RS256",
            headers={"kid": "never-published"},
        )
        for _ in range(3):
            with pytest.raises(InvalidTokenError, match="unknown kid"):
                auth.verify(stranger)
        assert provider.requests["/jwks"] == fetched + 1  # no refetch storm
    finally:
        del provider.keys["rsa-2"]


# --------------------------------------------------------------------------- issue and revoke


def test_issue_is_unsupported(oidc):
    with pytest.raises(UnsupportedOperationError, match="identity provider") as caught:
        oidc.issue("alice")
    assert isinstance(caught.value, NotImplementedError)


def test_revoke_records_the_token_in_this_process_only(oidc, provider, open_auth):
    token = provider.request_token(sub="alice")
    other_process = open_auth(oidc_settings(provider.issuer))
    oidc.revoke(token)
    with pytest.raises(TokenRevokedError):
        oidc.verify(token)
    assert other_process.verify(token).subject == "alice"
    without_jti = provider.sign(provider.id_token_claims(jti=None))
    oidc.revoke(without_jti)  # keyed by a digest of the token when there is no jti
    with pytest.raises(TokenRevokedError):
        oidc.verify(without_jti)
    with pytest.raises(InvalidTokenError):
        oidc.revoke(jwt.encode(provider.id_token_claims(), SECRET, algorithm="HS256"))


# --------------------------------------------------------------------------- opening


def test_discovery_must_name_the_configured_issuer(provider, open_auth):
    provider.discovery_overrides["issuer"] = "https://someone-else.example"
    try:
        with pytest.raises(ServiceUnavailableError, match="another issuer"):
            open_auth(oidc_settings(provider.issuer))
    finally:
        provider.discovery_overrides.clear()


def test_redirects_are_not_followed(provider, open_auth):
    provider.discovery_overrides["jwks_uri"] = f"{provider.issuer}/redirect"
    try:
        with pytest.raises(ServiceUnavailableError, match="HTTP 302"):
            open_auth(oidc_settings(provider.issuer))
    finally:
        provider.discovery_overrides.clear()


def test_an_unreachable_provider_fails_the_open_within_the_timeout(open_auth):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(ServiceUnavailableError, match="unreachable"):
        open_auth(oidc_settings(f"http://127.0.0.1:{port}", timeout="2s"))
    assert time.monotonic() - started < 5


def test_client_id_is_required(provider, open_auth):
    with pytest.raises(InvalidOptionsError, match=r'"oidc\.client_id" is required'):
        open_auth(oidc_settings(provider.issuer, client_id=""))


# --------------------------------------------------------------------------- insecure issuers


def test_the_local_provider_is_refused_without_allow_insecure(provider, open_auth):
    with pytest.raises(InvalidOptionsError, match=r'"oidc\.issuer".*https') as caught:
        open_auth(oidc_settings(provider.issuer, allow_insecure=False))
    assert caught.value.field == "oidc.issuer"
    assert provider.issuer not in str(caught.value)


@pytest.mark.parametrize(
    "issuer",
    [
        "https://127.0.0.1:8443",
        "https://localhost",
        "https://api.localhost",
        "https://10.1.2.3",
        "https://192.168.0.10",
        "https://172.16.5.4",
        "https://169.254.169.254",
        "https://[::1]:8443",
        "https://[fe80::1]",
        "https://[::ffff:127.0.0.1]",
        "https://0.0.0.0",
    ],
)
def test_private_and_loopback_issuers_are_refused_without_allow_insecure(issuer):
    with pytest.raises(InvalidOptionsError, match="loopback, private or link-local"):
        check_url(issuer, "oidc.issuer", allow_insecure=False)
    assert check_url(issuer, "oidc.issuer", allow_insecure=True) == issuer


@pytest.mark.parametrize(
    ("issuer", "reason"),
    [
        ("", "required"),
        ("ftp://id.example", "https"),
        ("https://user:pw@id.example", "credentials"),
        ("https://id.example?x=1", "query"),
        ("https://id.example:99999", "valid URL"),
        ("http://id.example", "allow_insecure"),
    ],
)
def test_issuer_url_rules(issuer, reason):
    with pytest.raises(InvalidOptionsError, match=reason) as caught:
        check_url(issuer, "oidc.issuer", allow_insecure=False)
    assert "pw@" not in str(caught.value)


def test_public_https_issuers_pass_the_url_rules():
    assert check_url("https://accounts.example.com", "oidc.issuer", allow_insecure=False)
    assert check_url("https://8.8.8.8/realms/x", "oidc.issuer", allow_insecure=False)


def test_names_resolving_to_private_addresses_are_refused_at_connect_time(provider):
    connect = oidc_module._guarded_connector(False)
    port = int(provider.issuer.rsplit(":", 1)[1])
    with pytest.raises(oidc_module._Blocked):
        connect(("localhost", port), 2)
    sock = oidc_module._guarded_connector(True)(("localhost", port), 2)
    sock.close()
