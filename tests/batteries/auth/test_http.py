"""Bearer authentication over HTTP: DRF views and the plain-Django decorator.

Every refusal answers the same ``401`` body with ``WWW-Authenticate: Bearer``; a missing
role answers ``403``; a valid token ``200``. The last test captures every log record at
DEBUG while all of it happens and checks that no token and no secret was written.
"""

from __future__ import annotations

import logging
import time

import jwt
import pytest
from django.test import Client, override_settings

from toolkit_batteries import services
from toolkit_batteries.auth import TokenUser
from toolkit_batteries.auth.bearer import BearerRefused, bearer_token
from toolkit_batteries.auth.decorators import bearer_required

from .conftest import OLD_SECRET, SECRET, craft, jwt_settings, payload

pytestmark = pytest.mark.urls("tests.batteries.auth.urls")

REST_FRAMEWORK = {"EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler"}
UNAUTHENTICATED = {"error": {"code": "unauthenticated", "message": "authentication required"}}
ROUTES = ("/api/me", "/plain/me")


@pytest.fixture(autouse=True)
def configured():
    settings = jwt_settings(keys=[{"kid": "k1", "secret": OLD_SECRET}], leeway="0s")
    with override_settings(TOOLKIT=settings, REST_FRAMEWORK=REST_FRAMEWORK):
        yield
    services.reset()


def get(path: str, authorization: str | None = None):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization is not None else {}
    return Client().get(path, **headers)


def refused_credentials() -> dict[str, str | None]:
    """Every kind of credential that must answer 401 (name -> Authorization header)."""
    now = int(time.time())
    revoked = services.auth().issue("user-1").token
    services.auth().revoke(revoked)
    return {
        "missing": None,
        "empty": "",
        "scheme only": "Bearer",
        "two parts": "Bearer abc def",
        "other scheme": "Basic dXNlcjpwYXNzd29yZA==",
        "not a jwt": "Bearer abc",
        "bad characters": "Bearer a,b;c",
        "tampered": "Bearer " + craft(payload())[:-3] + "AAA",
        "foreign secret": "Bearer " + craft(payload(), "x" * 40),
        "expired": "Bearer " + craft(payload(exp=now - 60)),
        "not yet valid": "Bearer " + craft(payload(nbf=now + 600)),
        "alg none": "Bearer " + jwt.encode(payload(), None, algorithm="none"),
        "unknown kid": "Bearer " + craft(payload(), OLD_SECRET, headers={"kid": "k9"}),
        "revoked": f"Bearer {revoked}",
    }


@pytest.mark.parametrize("route", ROUTES)
def test_every_refusal_is_the_same_generic_401(route):
    for name, header in refused_credentials().items():
        response = get(route, header)
        assert response.status_code == 401, name
        assert response.json() == UNAUTHENTICATED, name
        assert response["WWW-Authenticate"] == "Bearer", name


@pytest.mark.parametrize("route", ROUTES)
def test_a_valid_token_is_200(route):
    issued = services.auth().issue("user-7", roles=("member",))
    for scheme in ("Bearer", "bearer", "BEARER"):
        response = get(route, f"{scheme} {issued.token}")
        assert response.status_code == 200
        assert response.json()["id"] == "user-7"
        assert response.json()["roles"] == ["member"]
    assert get(route, "Bearer " + craft(payload(sub="legacy"))).json()["id"] == "legacy"


@pytest.mark.parametrize("route", ["/api/admin", "/plain/admin"])
def test_a_missing_role_is_403(route):
    member = services.auth().issue("user-7", roles=("member",)).token
    response = get(route, f"Bearer {member}")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert "WWW-Authenticate" not in response
    admin = services.auth().issue("user-8", roles=("member", "admin")).token
    assert get(route, f"Bearer {admin}").status_code == 200
    assert get(route).status_code == 401


def test_drf_view_exposes_token_user_and_claims():
    issued = services.auth().issue("user-3", roles=("a",))
    body = get("/api/me", f"Bearer {issued.token}").json()
    assert body == {"id": "user-3", "pk": "user-3", "roles": ["a"]}


def test_drf_without_the_toolkit_handler_still_answers_401_generic():
    with override_settings(REST_FRAMEWORK={}):
        response = get("/api/me", "Bearer nope")
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == "Bearer"
        assert response.json() == {"detail": "authentication required"}
        missing = get("/api/me")
        assert missing.status_code == 401
        assert missing.json() == {"detail": "authentication required"}


def test_token_user_grants_nothing_through_django_permissions():
    claims = services.auth().verify(services.auth().issue("u", roles=("admin",)).token)
    user = TokenUser(claims)
    assert user.is_authenticated and not user.is_anonymous
    assert (user.id, user.pk, user.get_username(), str(user)) == ("u", "u", "u", "u")
    assert user.roles == ("admin",) and user.has_roles("admin") and not user.has_roles("root")
    assert not user.has_perm("auth.anything") and not user.is_superuser
    assert user == TokenUser(claims) and len({user, TokenUser(claims)}) == 1


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("", None),
        ("Basic abc", None),
        ("Bearer abc.def-ghi_jkl~mno+pq/r==", "abc.def-ghi_jkl~mno+pq/r=="),
        (b"Bearer abc", "abc"),
    ],
)
def test_bearer_header_parsing(header, expected):
    assert bearer_token(header) == expected


@pytest.mark.parametrize(
    "header", ["Bearer", "Bearer a b", "Bearer a=b", "Bearer é", b"Bearer \xff"]
)
def test_malformed_bearer_headers_are_refused(header):
    with pytest.raises(BearerRefused):
        bearer_token(header)


def test_the_decorator_refuses_async_views_and_string_roles():
    async def view(request):
        return None

    with pytest.raises(TypeError, match="synchronous"):
        bearer_required(view)
    with pytest.raises(TypeError, match="sequence"):
        bearer_required(roles="admin")


def test_no_token_or_secret_is_ever_logged(caplog):
    caplog.set_level(logging.DEBUG)  # the root logger and every child, all levels
    auth = services.auth()
    issued = auth.issue("user-1", roles=("member",))
    member = auth.issue("user-2", roles=("member",))
    tokens = [issued.token, member.token]
    headers = refused_credentials()
    tokens += [h.split(" ", 1)[1] for h in headers.values() if h and " " in h]
    for route in ROUTES:
        assert get(route, f"Bearer {issued.token}").status_code == 200
        for header in headers.values():
            assert get(route, header).status_code == 401
    assert get("/api/admin", f"Bearer {member.token}").status_code == 403
    assert get("/plain/admin", f"Bearer {member.token}").status_code == 403
    auth.revoke(issued.token)
    assert get("/api/me", f"Bearer {issued.token}").status_code == 401

    messages = [record.getMessage() for record in caplog.records]
    texts = messages + [str(record.args) for record in caplog.records]
    texts += [record.exc_text or "" for record in caplog.records]
    # The refusals were logged with their reasons (so the check below is not vacuous).
    assert any("TokenExpiredError" in m for m in messages)
    assert any("TokenRevokedError" in m for m in messages)
    assert any("unknown kid" in m for m in messages)
    assert any("signature mismatch" in m for m in messages)
    assert any("token revoked" in m for m in messages)
    assert any("required role is missing" in m for m in messages)
    for text in texts:
        for token in tokens:
            assert token not in text
        for secret in (SECRET, OLD_SECRET):
            assert secret not in text
