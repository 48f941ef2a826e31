"""The strict Remote Config server refuses what Firebase refuses.

Every flag ``remotecfg`` test runs against :class:`tests.support.remote_config_server.
RemoteConfigServer`; these tests show it is worth its name: malformed token grants and
API requests are refused with Google's statuses and error bodies, publishing follows the
ETag / If-Match rules, and the adapter's own requests pass every rule.
"""

from __future__ import annotations

import time

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.remote_config_server import EMAIL, GRANT, KEY_ID, PROJECT, SCOPE
from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .conftest import remote_block
from .server import FakeRemoteConfig

SERVER_TEMPLATE = f"/v1/projects/{PROJECT}/namespaces/firebase-server/serverRemoteConfig"
TEMPLATE = f"/v1/projects/{PROJECT}/remoteConfig"


def _client(server: FakeRemoteConfig) -> httpx.Client:
    return httpx.Client(base_url=server.url, trust_env=False)


def _assertion(server: FakeRemoteConfig, *, key=None, kid=KEY_ID, life=3600, **claims) -> str:
    now = int(time.time())
    body = {"iss": EMAIL, "aud": f"{server.url}/token", "scope": SCOPE, "iat": now}
    body["exp"] = now + life
    body.update(claims)
    return jwt.encode(body, key or server.private_key, algorithm="RS256", headers={"kid": kid})


def _grant(server: FakeRemoteConfig, **data) -> httpx.Response:
    with _client(server) as client:
        return client.post("/token", data=data)


def test_the_adapters_requests_pass_every_rule(remote: FakeRemoteConfig, tmp_path) -> None:
    container = Container(Config.load({"flag": remote_block(remote, tmp_path)}, {}))
    try:
        assert container.flag().enabled("on") is True
    finally:
        container.close()
    answered = [(record.method, record.path, record.status) for record in remote.received]
    assert answered == [("POST", "/token", 200), ("GET", SERVER_TEMPLATE, 200)]


def test_a_well_formed_grant_issues_a_token(remote: FakeRemoteConfig) -> None:
    answer = _grant(remote, grant_type=GRANT, assertion=_assertion(remote))
    assert answer.status_code == 200
    assert answer.json()["token_type"] == "Bearer"
    assert answer.json()["access_token"] in remote.tokens


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"grant_type": "client_credentials"}, "unsupported_grant_type"),
        ({"assertion": "not-a-jwt"}, "invalid_grant"),
        ({"kid": "another-key"}, "invalid_grant"),
        ({"aud": "https://oauth2.googleapis.com/token"}, "invalid_grant"),
        ({"iss": "someone@example.iam.gserviceaccount.com"}, "invalid_grant"),
        ({"life": 7200}, "invalid_grant"),
        ({"scope": "https://www.googleapis.com/auth/cloud-platform"}, "invalid_scope"),
        ({"key": "other"}, "invalid_grant"),
    ],
)
def test_a_malformed_grant_is_refused(remote: FakeRemoteConfig, change, error) -> None:
    form = {"grant_type": change.pop("grant_type", GRANT)}
    if "assertion" in change:
        form["assertion"] = change.pop("assertion")
    else:
        if change.get("key") == "other":
            change["key"] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        form["assertion"] = _assertion(remote, **change)
    answer = _grant(remote, **form)
    assert answer.status_code == 400
    assert answer.json()["error"] == error and answer.json()["error_description"]
    assert not remote.tokens


def test_a_grant_that_is_not_form_encoded_is_refused(remote: FakeRemoteConfig) -> None:
    with _client(remote) as client:
        answer = client.post("/token", json={"grant_type": GRANT, "assertion": "x"})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_request"


@pytest.mark.parametrize("auth", [None, "Bearer ya29.unknown", "Basic Zm9vOmJhcg=="])
def test_the_api_needs_an_issued_bearer_token(remote: FakeRemoteConfig, auth) -> None:
    headers = {"Authorization": auth} if auth else {}
    with _client(remote) as client:
        answer = client.get(SERVER_TEMPLATE, headers=headers)
    assert answer.status_code == 401
    assert answer.json()["error"]["status"] == "UNAUTHENTICATED"


def test_another_project_a_get_body_or_an_unknown_parameter_is_refused(
    remote: FakeRemoteConfig,
) -> None:
    auth = {"Authorization": f"Bearer {remote.issue()}"}
    with _client(remote) as client:
        other = client.get(SERVER_TEMPLATE.replace(PROJECT, "someone-else"), headers=auth)
        with_body = client.request("GET", SERVER_TEMPLATE, headers=auth, content=b"{}")
        unknown = client.get(SERVER_TEMPLATE, headers=auth, params={"fields": "x"})
        fine = client.get(SERVER_TEMPLATE, headers=auth)
    assert other.status_code == 404 and other.json()["error"]["status"] == "NOT_FOUND"
    assert with_body.status_code == 400 and unknown.status_code == 400
    assert with_body.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert fine.status_code == 200 and fine.headers["etag"] == remote.etag


def test_publishing_follows_the_etag_if_match_rules(remote: FakeRemoteConfig) -> None:
    auth = {"Authorization": f"Bearer {remote.issue()}"}
    new = {"parameters": {"on": {"defaultValue": {"value": "false"}}}, "conditions": []}
    with _client(remote) as client:
        first = client.get(TEMPLATE, headers=auth).headers["etag"]
        missing = client.put(TEMPLATE, headers=auth, json=new)
        stale = client.put(TEMPLATE, headers={**auth, "If-Match": "etag-0-0"}, json=new)
        checked = client.put(
            TEMPLATE, headers={**auth, "If-Match": first}, json=new, params={"validateOnly": "true"}
        )
        assert client.get(TEMPLATE, headers=auth).headers["etag"] == first  # nothing written
        published = client.put(TEMPLATE, headers={**auth, "If-Match": first}, json=new)
        again = client.put(TEMPLATE, headers={**auth, "If-Match": first}, json=new)
        forced = client.put(TEMPLATE, headers={**auth, "If-Match": "*"}, json=new)
        as_text = client.put(
            TEMPLATE,
            headers={**auth, "If-Match": "*", "Content-Type": "text/plain"},
            content=b"{}",
        )
    for refused in (missing, stale, again):
        assert refused.status_code == 412
        assert refused.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert checked.status_code == 200
    assert published.status_code == 200 and published.headers["etag"] != first
    assert forced.status_code == 200 and forced.headers["etag"] != published.headers["etag"]
    assert forced.headers["etag"] == remote.etag
    assert as_text.status_code == 400
    assert remote.template["parameters"] == new["parameters"]
