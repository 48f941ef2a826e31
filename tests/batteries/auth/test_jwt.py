"""Every rule of the spec's jwt adapter, one test each, with tokens crafted by pyjwt.

Each refusal test starts from a token the adapter accepts (``test_a_crafted_token_verifies``)
and changes exactly one thing, so the documented error is the rule's doing.
"""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.support.clock import FakeClock
from toolkit_batteries.auth import (
    Authenticator,
    AuthError,
    Claims,
    InvalidTokenError,
    TokenExpiredError,
    TokenRevokedError,
)
from toolkit_batteries.auth.adapters.jwt import JWTAuthenticator
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.errors import ConfigurationError, InvalidOptionsError

from .conftest import NEW_SECRET, OLD_SECRET, SECRET, craft, hs256, jwt_settings, payload


def b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def options(**jwt_options):
    """Return the decoded ``jwt.`` options for ``jwt_options`` (as settings would give)."""
    return Config.load(jwt_settings(**jwt_options), {}).service("auth").options.jwt


# --------------------------------------------------------------------------- baseline


def test_a_crafted_token_verifies(jwt_auth):
    auth = jwt_auth()
    claims = payload(roles=["member"], email="a@example.com")
    result = auth.verify(craft(claims))
    assert isinstance(auth, Authenticator) and isinstance(result, Claims)
    assert result.subject == "user-1"
    assert result.roles == ("member",)
    assert result.token_id == claims["jti"]
    assert result.expires_at == datetime.fromtimestamp(claims["exp"], UTC)
    assert result.extra == {"email": "a@example.com", "iat": claims["iat"]}


def test_issued_tokens_verify_and_carry_a_random_jti(jwt_auth):
    auth = jwt_auth()
    first = auth.issue("user-9", roles=("admin", "member"), claims={"tenant": "t1"})
    second = auth.issue("user-9")
    assert first.token_id != second.token_id
    assert len(first.token_id) == 32 and int(first.token_id, 16) >= 0
    decoded = jwt.decode(first.token, SECRET, algorithms=["HS256"])
    assert decoded["jti"] == first.token_id
    assert decoded["exp"] - decoded["iat"] == 3600  # the default ttl
    assert jwt.get_unverified_header(first.token)["alg"] == "HS256"
    claims = auth.verify(first.token)
    assert (claims.subject, claims.roles) == ("user-9", ("admin", "member"))
    assert claims.extra["tenant"] == "t1"
    assert claims.expires_at == first.expires_at
    assert "roles" not in jwt.decode(second.token, SECRET, algorithms=["HS256"])


def test_issue_refuses_bad_arguments_without_echoing_values(jwt_auth):
    auth = jwt_auth()
    with pytest.raises(ValueError, match="subject"):
        auth.issue("")
    with pytest.raises(ValueError, match="at least one second"):
        auth.issue("u", ttl=timedelta(milliseconds=500))
    with pytest.raises(TypeError):
        auth.issue("u", roles="admin")
    for registered in ("exp", "sub", "jti", "iss", "aud", "nbf", "iat", "roles"):
        with pytest.raises(ValueError, match=f'"{registered}"') as caught:
            auth.issue("u", claims={registered: "sneaky-value"})
        assert "sneaky-value" not in str(caught.value)
    with pytest.raises(TypeError, match="JSON") as caught:
        auth.issue("u", claims={"blob": object()})


# --------------------------------------------------------------------------- rule 1: secret


@pytest.mark.parametrize(
    ("jwt_options", "field"),
    [
        ({"secret": "x" * 31}, "jwt.secret"),
        ({"secret": "é" * 15}, "jwt.secret"),  # 30 bytes in UTF-8, 15 characters
        ({"secret": ""}, "jwt.secret"),
        ({"secret": "", "keys": [{"kid": "a", "secret": "y" * 31}]}, "jwt.keys[0].secret"),
        ({"keys": [{"kid": "", "secret": OLD_SECRET}]}, "jwt.keys[0].kid"),
        (
            {"keys": [{"kid": "a", "secret": OLD_SECRET}, {"kid": "a", "secret": NEW_SECRET}]},
            "jwt.keys[1].kid",
        ),
        ({"keys": [{"kid": "a", "secret": OLD_SECRET}], "active_kid": "b"}, "jwt.active_kid"),
        ({"active_kid": "b"}, "jwt.active_kid"),
        ({"secret": SECRET, "leeway": "-1s"}, "jwt.leeway"),
        ({"secret": SECRET, "leeway": "301s"}, "jwt.leeway"),
        ({"secret": SECRET, "max_ttl": "500ms"}, "jwt.max_ttl"),
    ],
)
def test_open_fails_on_a_bad_key_configuration(open_auth, jwt_options, field):
    settings = {"auth": {"adapter": "jwt", "options": {"jwt": jwt_options}}}
    with pytest.raises(InvalidOptionsError) as caught:
        open_auth(settings)
    error = caught.value
    assert isinstance(error, ConfigurationError)
    assert (error.service, error.instance, error.field) == ("auth", "default", field)
    for value in ("x" * 31, "y" * 31, "é" * 15, OLD_SECRET, NEW_SECRET):
        assert value not in str(error)


def test_open_fails_on_a_short_secret_from_the_environment(open_auth):
    short = "env-secret-too-short"
    for environ in ({"AUTH_JWT_SECRET": short}, {"AUTH__DEFAULT__JWT_SECRET": short}):
        with pytest.raises(InvalidOptionsError, match=r'"jwt\.secret"') as caught:
            open_auth({}, environ)
        assert short not in str(caught.value)
    auth = open_auth({}, {"AUTH__DEFAULT__JWT_SECRET": SECRET})
    assert auth.verify(craft(payload())).subject == "user-1"


def test_the_default_configuration_ships_no_secret(open_auth):
    with pytest.raises(InvalidOptionsError, match=r'"jwt\.secret" is required'):
        open_auth({})


# --------------------------------------------------------------------------- rule 2: HS256


def test_alg_none_is_refused(jwt_auth):
    auth = jwt_auth()
    unsigned = jwt.encode(payload(), None, algorithm="none")
    assert unsigned.endswith(".")
    with pytest.raises(InvalidTokenError, match="algorithm"):
        auth.verify(unsigned)
    for spelling in ("None", "NONE", "nOnE"):
        forged = f"{b64({'alg': spelling, 'typ': 'JWT'})}.{b64(payload())}."
        with pytest.raises(InvalidTokenError):
            auth.verify(forged)


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
@pytest.mark.parametrize("algorithm", ["HS384", "HS512"])
def test_other_hmac_algorithms_are_refused_even_with_the_right_secret(jwt_auth, algorithm):
    token = craft(payload(), SECRET, algorithm)
    assert jwt.decode(token, SECRET, algorithms=[algorithm])["sub"] == "user-1"
    with pytest.raises(InvalidTokenError, match="algorithm"):
        jwt_auth().verify(token)


@pytest.mark.parametrize("algorithm", ["RS256", "ES256", "PS256"])
def test_asymmetric_algorithms_are_refused(jwt_auth, algorithm):
    if algorithm == "ES256":
        private = ec.generate_private_key(ec.SECP256R1())
    else:
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(InvalidTokenError, match="algorithm"):
        jwt_auth().verify(craft(payload(), private, algorithm))


def test_hs256_header_with_a_foreign_signature_is_refused(jwt_auth):
    token = craft(payload(), "another-secret-of-at-least-32-bytes!!")
    with pytest.raises(InvalidTokenError, match="signature"):
        jwt_auth().verify(token)


def test_a_tampered_signature_or_payload_is_refused(jwt_auth):
    auth = jwt_auth()
    token = craft(payload())
    head, body, signature = token.split(".")
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    with pytest.raises(InvalidTokenError, match="signature"):
        auth.verify(f"{head}.{body}.{flipped}")
    promoted = b64({**jwt.decode(token, SECRET, algorithms=["HS256"]), "roles": ["admin"]})
    with pytest.raises(InvalidTokenError, match="signature"):
        auth.verify(f"{head}.{promoted}.{signature}")


@pytest.mark.parametrize(
    "token",
    ["", "abc", "a.b", "a.b.c.d", "not-base64!.x.y", f"{b64(['list'])}.x.y", "x" * 9000, None, 42],
)
def test_malformed_tokens_are_invalid(jwt_auth, token):
    with pytest.raises(InvalidTokenError):
        jwt_auth().verify(token)


def test_critical_header_extensions_are_refused(jwt_auth):
    token = craft(payload(), headers={"crit": ["exp"], "exp": 1})
    with pytest.raises(InvalidTokenError, match="header"):
        jwt_auth().verify(token)


# --------------------------------------------------------------------------- rule 3: exp, nbf


def test_missing_exp_is_refused(jwt_auth):
    with pytest.raises(InvalidTokenError, match="exp"):
        jwt_auth(leeway="5m").verify(craft(payload(exp=None)))


@pytest.mark.parametrize("exp", ["soon", True, [1]])
def test_a_non_numeric_exp_is_refused(jwt_auth, exp):
    with pytest.raises(InvalidTokenError, match="exp"):
        jwt_auth().verify(craft(payload(exp=exp)))


def test_expired_within_leeway_is_accepted_and_beyond_is_token_expired(jwt_auth):
    now = int(time.time())
    auth = jwt_auth(leeway="30s")
    assert auth.verify(craft(payload(exp=now - 10))).subject == "user-1"
    with pytest.raises(TokenExpiredError) as caught:
        auth.verify(craft(payload(exp=now - 60)))
    assert not isinstance(caught.value, InvalidTokenError)
    assert isinstance(caught.value, AuthError)


def test_leeway_zero_is_strict_about_exp(jwt_auth):
    with pytest.raises(TokenExpiredError):
        jwt_auth().verify(craft(payload(exp=int(time.time()) - 1)))


def test_future_nbf_within_leeway_is_accepted_and_beyond_is_refused(jwt_auth):
    now = int(time.time())
    auth = jwt_auth(leeway="30s")
    assert auth.verify(craft(payload(nbf=now + 10))).extra["nbf"] == now + 10
    with pytest.raises(InvalidTokenError, match="nbf") as caught:
        auth.verify(craft(payload(nbf=now + 120)))
    assert not isinstance(caught.value, TokenExpiredError)


def test_leeway_zero_is_strict_about_nbf(jwt_auth):
    auth = jwt_auth()
    assert auth.verify(craft(payload(nbf=int(time.time()) - 1))).subject == "user-1"
    with pytest.raises(InvalidTokenError, match="nbf"):
        auth.verify(craft(payload(nbf=int(time.time()) + 5)))


def test_time_rules_follow_the_injected_clock():
    clock = FakeClock(time.time())
    auth = JWTAuthenticator(options(leeway="10s"), clock=clock)
    issued = auth.issue("u", ttl=timedelta(minutes=1))
    clock.now += 65  # past exp, inside the leeway
    assert auth.verify(issued.token).subject == "u"
    clock.now += 10
    with pytest.raises(TokenExpiredError):
        auth.verify(issued.token)


# --------------------------------------------------------------------------- rule 4: kid


def test_unknown_kid_fails_closed(jwt_auth):
    auth = jwt_auth(keys=[{"kid": "k1", "secret": OLD_SECRET}])
    assert auth.verify(craft(payload(), OLD_SECRET, headers={"kid": "k1"})).subject == "user-1"
    with pytest.raises(InvalidTokenError, match="unknown kid"):
        auth.verify(craft(payload(), OLD_SECRET, headers={"kid": "k2"}))
    # A kid is never ignored in favour of the legacy secret.
    with pytest.raises(InvalidTokenError, match="unknown kid"):
        auth.verify(craft(payload(), SECRET, headers={"kid": "k2"}))
    with pytest.raises(InvalidTokenError, match="unknown kid"):
        auth.verify(hs256({"alg": "HS256", "kid": 7}, payload(), OLD_SECRET))


def test_a_kid_without_listed_keys_fails_closed(jwt_auth):
    with pytest.raises(InvalidTokenError, match="unknown kid"):
        jwt_auth().verify(craft(payload(), SECRET, headers={"kid": "k1"}))


def test_a_kid_picks_its_own_key_only(jwt_auth):
    auth = jwt_auth(keys=[{"kid": "k1", "secret": OLD_SECRET}, {"kid": "k2", "secret": NEW_SECRET}])
    with pytest.raises(InvalidTokenError, match="signature"):
        auth.verify(craft(payload(), NEW_SECRET, headers={"kid": "k1"}))


def test_kid_less_tokens_use_the_legacy_secret(jwt_auth):
    auth = jwt_auth(keys=[{"kid": "k1", "secret": OLD_SECRET}])
    assert auth.verify(craft(payload())).subject == "user-1"
    with pytest.raises(InvalidTokenError, match="signature"):
        auth.verify(craft(payload(), OLD_SECRET))
    keys_only = jwt_auth(secret="", keys=[{"kid": "k1", "secret": OLD_SECRET}])
    with pytest.raises(InvalidTokenError, match="kid-less"):
        keys_only.verify(craft(payload(), OLD_SECRET))


def test_new_tokens_carry_the_active_kid(jwt_auth):
    keys = [{"kid": "k1", "secret": OLD_SECRET}, {"kid": "k2", "secret": NEW_SECRET}]
    first = jwt_auth(keys=keys).issue("u")
    assert jwt.get_unverified_header(first.token)["kid"] == "k1"  # empty active_kid: first
    jwt.decode(first.token, OLD_SECRET, algorithms=["HS256"])
    second = jwt_auth(keys=keys, active_kid="k2").issue("u")
    assert jwt.get_unverified_header(second.token)["kid"] == "k2"
    jwt.decode(second.token, NEW_SECRET, algorithms=["HS256"])
    legacy = jwt_auth().issue("u")
    assert "kid" not in jwt.get_unverified_header(legacy.token)


# --------------------------------------------------------------------------- issuer, audience


def test_wrong_or_missing_issuer_is_refused(jwt_auth):
    auth = jwt_auth(issuer="https://id.example")
    assert auth.verify(craft(payload(iss="https://id.example"))).extra["iss"] == (
        "https://id.example"
    )
    for iss in ("https://evil.example", None, ["https://id.example"]):
        with pytest.raises(InvalidTokenError, match="issuer"):
            auth.verify(hs256({"alg": "HS256"}, payload(iss=iss)))
    issued = auth.issue("u")
    assert jwt.decode(issued.token, SECRET, algorithms=["HS256"])["iss"] == "https://id.example"


def test_an_issuer_is_refused_where_none_is_configured(jwt_auth):
    with pytest.raises(InvalidTokenError, match="unexpected issuer"):
        jwt_auth().verify(craft(payload(iss="https://other-tenant.example")))


def test_wrong_or_missing_audience_is_refused(jwt_auth):
    auth = jwt_auth(audience="api")
    assert auth.verify(craft(payload(aud="api"))).subject == "user-1"
    assert auth.verify(craft(payload(aud=["web", "api"]))).subject == "user-1"
    for aud in ("web", ["web"], None, 7, ["api", 7]):
        with pytest.raises(InvalidTokenError, match="audience"):
            auth.verify(craft(payload(aud=aud)))
    issued = auth.issue("u")
    assert jwt.decode(issued.token, SECRET, algorithms=["HS256"], audience="api")["aud"] == "api"


def test_an_audience_is_refused_where_none_is_configured(jwt_auth):
    with pytest.raises(InvalidTokenError, match="unexpected audience"):
        jwt_auth().verify(craft(payload(aud="api")))


# --------------------------------------------------------------------------- required claims


@pytest.mark.parametrize("sub", [None, "", 42])
def test_a_missing_or_empty_subject_is_refused(jwt_auth, sub):
    with pytest.raises(InvalidTokenError, match="subject"):
        jwt_auth().verify(craft(payload(sub=sub)))


@pytest.mark.parametrize("jti", [None, "", 5, "has space", "x" * 129])
def test_a_missing_or_malformed_jti_is_refused(jwt_auth, jti):
    with pytest.raises(InvalidTokenError, match="jti"):
        jwt_auth().verify(craft(payload(jti=jti)))


@pytest.mark.parametrize("roles", ["admin", [1], {"a": 1}, [None]])
def test_malformed_roles_are_refused(jwt_auth, roles):
    with pytest.raises(InvalidTokenError, match="roles"):
        jwt_auth().verify(craft(payload(roles=roles)))


# --------------------------------------------------------------------------- max_ttl


def test_max_ttl_caps_issued_lifetimes():
    clock = FakeClock(1_800_000_000)
    auth = JWTAuthenticator(options(max_ttl="1h"), clock=clock)
    capped = auth.issue("u", ttl=timedelta(hours=10))
    decoded = jwt.decode(
        capped.token,
        SECRET,
        algorithms=["HS256"],
        options={"verify_exp": False, "verify_iat": False},
    )
    assert decoded["exp"] - decoded["iat"] == 3600
    assert capped.expires_at == datetime.fromtimestamp(1_800_000_000 + 3600, UTC)
    short = auth.issue("u", ttl=timedelta(minutes=5))
    assert short.expires_at == datetime.fromtimestamp(1_800_000_000 + 300, UTC)
    uncapped = JWTAuthenticator(options(), clock=clock).issue("u", ttl=timedelta(hours=10))
    assert uncapped.expires_at == datetime.fromtimestamp(1_800_000_000 + 36000, UTC)


def test_max_ttl_refuses_tokens_claiming_a_longer_lifetime(jwt_auth):
    now = int(time.time())
    auth = jwt_auth(max_ttl="1h")
    assert auth.verify(craft(payload(iat=now, exp=now + 3600))).subject == "user-1"
    with pytest.raises(InvalidTokenError, match="max_ttl"):
        auth.verify(craft(payload(iat=now, exp=now + 7200)))
    with pytest.raises(InvalidTokenError, match="max_ttl"):
        auth.verify(craft(payload(iat=None, exp=now + 7200)))
    with pytest.raises(InvalidTokenError, match="max_ttl"):  # a future iat cannot stretch it
        auth.verify(craft(payload(iat=now + 3600, exp=now + 7000)))


# --------------------------------------------------------------------------- revocation


def test_a_revoked_jti_is_refused(jwt_auth):
    auth = jwt_auth()
    token = craft(payload())
    other = craft(payload())
    auth.revoke(token)
    with pytest.raises(TokenRevokedError) as caught:
        auth.verify(token)
    assert isinstance(caught.value, InvalidTokenError)
    assert auth.verify(other).subject == "user-1"
    auth.revoke(token)  # idempotent


def test_revoke_requires_a_token_this_instance_would_accept(jwt_auth):
    auth = jwt_auth()
    with pytest.raises(InvalidTokenError, match="signature"):
        auth.revoke(craft(payload(), "someone-else-entirely-32-bytes-long!"))
    with pytest.raises(InvalidTokenError, match="algorithm"):
        auth.revoke(jwt.encode(payload(), None, algorithm="none"))
    with pytest.raises(InvalidTokenError, match="jti"):
        auth.revoke(craft(payload(jti=None)))
    assert len(auth.revocation_store) == 0


def test_revocation_outlives_exp_by_the_leeway():
    clock = FakeClock(time.time())
    auth = JWTAuthenticator(options(leeway="30s"), clock=clock)
    issued = auth.issue("u", ttl=timedelta(minutes=1))
    auth.revoke(issued.token)
    clock.now += 75  # expired but inside the leeway: still a usable token, still revoked
    with pytest.raises(TokenRevokedError):
        auth.verify(issued.token)
    clock.now += 60
    with pytest.raises(TokenExpiredError):
        auth.verify(issued.token)


def test_revoking_an_expired_token_records_nothing():
    clock = FakeClock(time.time())
    auth = JWTAuthenticator(options(), clock=clock)
    issued = auth.issue("u", ttl=timedelta(seconds=10))
    clock.now += 20
    auth.revoke(issued.token)
    assert len(auth.revocation_store) == 0


def test_a_token_not_valid_yet_can_be_revoked(jwt_auth):
    auth = jwt_auth()
    token = craft(payload(nbf=int(time.time()) + 60))
    auth.revoke(token)
    assert len(auth.revocation_store) == 1


# --------------------------------------------------------------------------- secrecy, lifecycle


def test_errors_and_reprs_never_show_tokens_or_secrets(jwt_auth):
    auth = jwt_auth(keys=[{"kid": "k1", "secret": OLD_SECRET}])
    issued = auth.issue("u")
    refused = [
        craft(payload(exp=int(time.time()) - 60)),
        craft(payload(), "wrong-secret-that-is-long-enough-32b"),
        craft(payload(), OLD_SECRET, headers={"kid": "nope"}),
        craft(payload(sub="")),
    ]
    for token in refused:
        with pytest.raises(AuthError) as caught:
            auth.verify(token)
        assert token not in str(caught.value) and token not in repr(caught.value)
        error = caught.value
        assert error.__cause__ is None  # pyjwt's exception (and its text) is not chained
        assert error.__context__ is None or error.__suppress_context__
    for text in (repr(auth), str(auth), repr(issued), str(issued)):
        assert issued.token not in text
        assert SECRET not in text and OLD_SECRET not in text
    assert "k1" in repr(auth)


def test_a_closed_authenticator_fails_closed(jwt_auth):
    auth = jwt_auth()
    issued = auth.issue("u")
    auth.close()
    with pytest.raises(InvalidTokenError, match="closed"):
        auth.verify(issued.token)
    with pytest.raises(InvalidTokenError, match="closed"):
        auth.revoke(issued.token)
    with pytest.raises(AuthError, match="closed"):
        auth.issue("u")


def test_the_container_opens_the_jwt_adapter_by_default(open_auth):
    auth = open_auth({"auth": {"options": {"jwt": {"secret": SECRET}}}})
    assert type(auth) is JWTAuthenticator
    assert auth.adapter_name == "jwt" and auth.service_name == "auth"


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
def test_the_header_cache_stays_bounded(jwt_auth):
    from toolkit_batteries.auth import tokens

    auth = jwt_auth()
    for index in range(tokens._HEADER_CACHE_SIZE + 50):
        token = craft(payload(), headers={"x-junk": index})
        assert auth.verify(token).subject == "user-1"
        assert len(tokens._HEADER_CACHE) <= tokens._HEADER_CACHE_SIZE
    with pytest.raises(InvalidTokenError, match="algorithm"):  # cached headers still judged
        auth.verify(craft(payload(), SECRET, "HS512", headers={"x-junk": 1}))
