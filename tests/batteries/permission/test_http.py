"""HTTP: ``HasPermission`` (DRF) and ``require_permission`` (plain views).

Bearer tokens are real: issued by the auth battery's jwt adapter and verified per
request. Refusals answer ``403`` in the toolkit error shape, or ``404 not_found`` on one
object the caller may not read either (as an unknown id does); no token, ``401``. The last
test captures every log record and checks that no token and no secret was written.
"""

from __future__ import annotations

import logging

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.test import Client, override_settings

from toolkit_batteries import services

from .conftest import POLICY_ADAPTERS, SECRET, toolkit_settings

pytestmark = pytest.mark.urls("tests.batteries.permission.urls")

REST_FRAMEWORK = {"EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler"}
DENIED = {"error": {"code": "permission_denied", "message": "permission denied"}}
HIDDEN = {"error": {"code": "not_found", "message": "Not found."}}
UNAUTHENTICATED = {"error": {"code": "unauthenticated", "message": "authentication required"}}


@pytest.fixture(params=POLICY_ADAPTERS)
def adapter(request):
    with override_settings(TOOLKIT=toolkit_settings(request.param), REST_FRAMEWORK=REST_FRAMEWORK):
        yield request.param
    services.reset()


def bearer(subject: str, *roles: str) -> str:
    return "Bearer " + services.auth().issue(subject, roles=roles).token


def call(method: str, path: str, authorization: str | None = None):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization is not None else {}
    return getattr(Client(), method)(path, **headers)


def test_drf_collection_allowed_and_denied(adapter):
    assert call("get", "/api/posts", bearer("u-x")).status_code == 200  # role "*"
    response = call("post", "/api/posts", bearer("u-x", "member"))
    assert response.status_code == 403
    assert response.json() == DENIED
    assert call("post", "/api/posts", bearer("u-x", "admin")).status_code == 201


def test_drf_owned_only_sees_the_loaded_object(adapter):
    alice = bearer("u-alice", "editor")
    assert call("put", "/api/posts/p-alice", alice).status_code == 200
    response = call("put", "/api/posts/p-bob", alice)  # alice may not read it: hidden
    assert response.status_code == 404
    assert response.json() == HIDDEN == call("put", "/api/posts/p-nope", alice).json()
    reader = bearer("u-alice", "editor", "member")  # may read it: an honest 403
    response = call("put", "/api/posts/p-bob", reader)
    assert response.status_code == 403 and response.json() == DENIED


def test_drf_deny_wins_and_unknown_roles(adapter):
    assert call("delete", "/api/posts/p-bob", bearer("u-m", "moderator")).status_code == 204
    response = call("delete", "/api/posts/p-bob", bearer("u-m", "moderator", "editor"))
    assert response.status_code == 404 and response.json() == HIDDEN
    response = call("delete", "/api/posts/p-bob", bearer("u-m", "moderator", "editor", "member"))
    assert response.status_code == 403 and response.json() == DENIED
    assert call("get", "/api/posts/p-bob", bearer("u-g", "ghost")).status_code == 404
    assert call("get", "/api/posts/p-bob", bearer("u-g", "member")).status_code == 200
    suspended = bearer("u-s", "admin", "suspended")
    assert call("get", "/api/posts", suspended).status_code == 403


def test_drf_viewset_actions_map_to_permission_actions(adapter):
    assert call("get", "/vs/posts", bearer("u-g", "ghost")).status_code == 200
    assert call("get", "/vs/posts/p-bob", bearer("u-g", "ghost")).status_code == 404
    assert call("get", "/vs/posts/p-bob", bearer("u-g", "member")).status_code == 200
    alice = bearer("u-alice", "editor")
    assert call("post", "/vs/posts/p-bob", alice).json() == {"published": "p-bob"}
    response = call("post", "/vs/posts/p-alice", alice)  # owned-only deny: not your own
    assert response.status_code == 404 and response.json() == HIDDEN  # and not readable
    reader = bearer("u-alice", "editor", "member")
    response = call("post", "/vs/posts/p-alice", reader)
    assert response.status_code == 403 and response.json() == DENIED


def test_drf_without_a_token_is_401(adapter):
    for path in ("/api/posts", "/api/posts/p-alice"):
        response = call("get", path)
        assert response.status_code == 401, path
        assert response.json() == UNAUTHENTICATED
        response = call("get", path, "Bearer not-a-token")
        assert response.status_code == 401, path


def test_drf_unmapped_method_is_a_configuration_error_not_an_allow(adapter, caplog):
    response = call("post", "/api/unmapped", bearer("u-a", "admin"))
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal"
    assert any("permission_action" in r.getMessage() or r.exc_info for r in caplog.records)
    assert call("get", "/api/unmapped", bearer("u-a", "admin")).status_code == 200


def test_decorator_allows_denies_and_authenticates(adapter):
    response = call("get", "/plain/posts", bearer("u-x"))
    assert response.status_code == 200 and response.json()["subject"] == "u-x"
    assert call("get", "/plain/posts", bearer("u-s", "suspended")).json() == DENIED
    assert call("get", "/plain/posts", bearer("u-s", "suspended")).status_code == 403
    for header in (None, "Bearer not-a-token", "Basic dXNlcjpwYXNz"):
        response = call("get", "/plain/posts", header)
        assert response.status_code == 401
        assert response.json() == UNAUTHENTICATED
        assert response["WWW-Authenticate"] == "Bearer"


def test_decorator_passes_the_loaded_object(adapter):
    alice = bearer("u-alice", "editor")
    response = call("get", "/plain/posts/p-alice/edit", alice)
    assert response.status_code == 200 and response.json() == {"edited": "p-alice"}
    response = call("get", "/plain/posts/p-bob/edit", alice)  # not hers: as if missing
    hidden = response.json()
    assert response.status_code == 404
    response = call("get", "/plain/posts/p-nope/edit", alice)
    assert response.status_code == 404 and response.json() == hidden
    assert response.json()["error"]["code"] == "not_found"
    with override_settings(TOOLKIT_PERMISSION_DENIED_STATUS=403):
        response = call("get", "/plain/posts/p-bob/edit", alice)
        assert response.status_code == 403 and response.json() == DENIED


@pytest.mark.django_db
def test_decorator_loads_a_model_by_its_url_keyword(adapter, tmp_path):
    if adapter == "rbac":
        rule = {"Role": "editor", "Action": "post.edit", "OwnedOnly": True, "OwnedAttr": "user_id"}
        options = {"rules": [rule]}
    else:
        policy = tmp_path / "policy.csv"
        policy.write_text("p, editor, post.edit, allow, user_id\n")
        options = {"policy_path": str(policy)}
    with override_settings(TOOLKIT=toolkit_settings(adapter, **options)):
        owner = User.objects.create(username="owner")
        other = User.objects.create(username="other")
        entry = LogEntry.objects.create(user=owner, action_flag=1, object_repr="x")
        url = f"/plain/entries/{entry.pk}/edit"
        response = call("get", url, bearer(str(owner.pk), "editor"))
        assert response.status_code == 200 and response.json() == {"edited": entry.pk}
        response = call("get", url, bearer(str(other.pk), "editor"))
        assert response.status_code == 404  # another user's entry looks like a missing one
        missing = f"/plain/entries/{entry.pk + 99}/edit"
        assert call("get", missing, bearer(str(owner.pk), "editor")).json() == response.json()
    services.reset()


def test_decorator_reuses_the_claims_of_bearer_required(adapter):
    response = call("get", "/plain/stacked", bearer("u-x"))
    assert response.status_code == 200 and response.json() == {"subject": "u-x"}
    assert call("get", "/plain/stacked", bearer("u-s", "suspended")).status_code == 403


def test_decorator_refuses_bad_declarations():
    from toolkit_batteries.permission.decorators import require_permission

    with pytest.raises(TypeError):
        require_permission("")
    with pytest.raises(TypeError):
        require_permission("post.read", resource="Post")


def test_no_token_or_secret_in_any_log(adapter, caplog):
    caplog.set_level(logging.DEBUG)
    tokens = [bearer("u-alice", "editor"), bearer("u-s", "suspended"), bearer("u-m", "member")]
    for token in tokens:
        for method, path in (
            ("get", "/api/posts"),
            ("put", "/api/posts/p-bob"),
            ("get", "/plain/posts"),
            ("get", "/plain/posts/p-bob/edit"),
        ):
            call(method, path, token)
    call("get", "/plain/posts", tokens[0][:-4] + "AAAA")
    assert any(r.name == "toolkit.permission" for r in caplog.records)
    text = "\n".join(r.getMessage() for r in caplog.records)
    for token in tokens:
        assert token.split()[1] not in text
    assert SECRET not in text
