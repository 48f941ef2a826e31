"""The generated API refuses what it cannot take: deep JSON, impossible times, missing roles.

A schema compiled and installed in-process (what ``manage.py compile_schema`` writes), then
real requests through Django: a deeply nested body answers 400 (never a 500 and a logged
traceback), and ``auth: required(roles: {a, b})`` lets in a caller holding any one of the
roles, as docs/schema-language.md says, and refuses one holding none of them.
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from toolkit_batteries import services
from toolkit_batteries.http.errors import MAX_JSON_DEPTH

try:
    from .django_support import served_schema
except ImportError:  # rootdir-relative import mode (tests/codegen is not a package)
    from django_support import served_schema

SCHEMA = """\
entity Doc {
  id: uuid @primary
  title: string @validate(max_len: 100)
}

service DocService {
  rpc CreateDoc(title: string @validate(min_len: 1, max_len: 100)) -> Doc {
    http: POST "/v1/docs"
    auth: none
  }

  rpc RemindDoc(at: timestamp) -> Doc {
    http: POST "/v1/docs/remind"
    auth: none
  }

  rpc PurgeDoc(id: uuid) -> Doc {
    http: DELETE "/v1/docs/{id}"
    auth: required(roles: {admin, support})
  }
}
"""


@pytest.fixture(scope="module")
def docs_app(
    tmp_path_factory: pytest.TempPathFactory, django_db_setup: Any, django_db_blocker: Any
) -> Any:
    root = tmp_path_factory.mktemp("inputs")
    with served_schema(root, SCHEMA, "cg_inputs", django_db_blocker) as app:
        yield app


@pytest.fixture
def client(docs_app: Any, db: Any) -> Client:
    return Client()


def _bearer(*roles: str) -> dict[str, str]:
    token = services.auth().issue("user-1", roles=roles, ttl=timedelta(minutes=5)).token
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def test_a_deeply_nested_body_is_400_not_a_server_error(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        brackets = client.post("/v1/docs", "[" * 200_000, content_type="application/json")
        nested: Any = "x"
        for _ in range(MAX_JSON_DEPTH + 1):
            nested = {"a": nested}
        deep = client.post(
            "/v1/docs", json.dumps({"title": nested}), content_type="application/json"
        )
    for response in (brackets, deep):
        assert response.status_code == 400, response.content[:300]
        assert response.json()["error"]["code"] == "invalid_argument"
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in deep.json()["error"]["message"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_body_at_the_depth_bound_is_still_read(client: Client) -> None:
    shallow: Any = "x"
    for _ in range(MAX_JSON_DEPTH - 2):
        shallow = [shallow]
    response = client.post(
        "/v1/docs", json.dumps({"title": shallow}), content_type="application/json"
    )
    # Read and validated: the title is not a string (field error), not a depth refusal.
    assert response.status_code == 400
    assert "title" in response.json()["error"].get("fields", {})


@pytest.mark.parametrize("at", ["2024-01-01T12:99:00Z", "2024-02-30T10:00:00Z"])
def test_an_impossible_timestamp_is_400_not_a_server_error(
    client: Client, at: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Well-formed RFC 3339 text naming no instant: the parser raised, and it answered 500.
    with caplog.at_level(logging.ERROR):
        response = client.post(
            "/v1/docs/remind", json.dumps({"at": at}), content_type="application/json"
        )
    assert response.status_code == 400, response.content[:300]
    assert "at" in response.json()["error"]["fields"]
    assert at not in response.content.decode()  # the field is named, never the value
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    ("roles", "allowed"),
    [
        (("admin",), True),
        (("support",), True),
        (("admin", "support"), True),
        (("member",), False),
        ((), False),
    ],
)
def test_listed_roles_are_alternatives(
    client: Client, roles: tuple[str, ...], allowed: bool
) -> None:
    response = client.delete(f"/v1/docs/{uuid.uuid4()}", **_bearer(*roles))
    if allowed:  # past the role check: the ORM default looks the document up
        assert response.status_code == 404, response.content
    else:
        assert response.status_code == 403, response.content
        assert response.json()["error"]["code"] == "permission_denied"


def test_no_bearer_token_is_still_401(client: Client) -> None:
    assert client.delete(f"/v1/docs/{uuid.uuid4()}").status_code == 401


def test_the_document_says_the_roles_are_alternatives(tmp_path: Path) -> None:
    from toolkit_codegen.compiler import compile_schema, load_sources

    compiled = compile_schema(load_sources({"app.toolkit": SCHEMA}), ["openapi"])
    document = json.loads(compiled.files["openapi/openapi.json"])
    operation = document["paths"]["/v1/docs/{id}"]["delete"]
    assert operation["x-roles"] == ["admin", "support"]
    assert "any one of the roles in x-roles (admin, support)" in operation["description"]
