"""The generated API, served: the test project's schema compiled and installed in-process.

``tests/codegen/django_project`` holds a schema and hand-written handlers; the module
fixture compiles the schema next to those handlers (``toolkit_batteries.api_runtime.project``,
what ``manage.py compile_schema`` runs), installs the app, applies its generated migration
to the SQLite test database, and serves it through Django: the spec's HTTP shapes, auth,
pagination, drf-spectacular's document against the compiled one, and schemathesis.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from toolkit_batteries import services
from toolkit_codegen.backends import BackendOptions, generate

try:
    from .django_support import FIXTURES, PROJECT, SCHEMAS, build_app, installed, load
except ImportError:  # rootdir-relative import mode (tests/codegen is not a package)
    from django_support import FIXTURES, PROJECT, SCHEMAS, build_app, installed, load


@pytest.fixture(scope="module")
def project_app(
    tmp_path_factory: pytest.TempPathFactory, django_db_setup: Any, django_db_blocker: Any
) -> Iterator[Any]:
    """Compile the test project into a temporary app ``api``, install and migrate it."""
    app = build_app(
        tmp_path_factory.mktemp("codegen_api"),
        PROJECT / "schema",
        "api",
        handlers=PROJECT / "api" / "handlers.py",
    )
    with installed(app, django_db_blocker):
        yield app


@pytest.fixture
def client(project_app: Any, db: Any) -> Client:
    """Return a test client of the served app (each test in a rolled-back transaction)."""
    return Client()


def bearer(*roles: str, subject: str = "user-1") -> dict[str, str]:
    """Return request headers with a fresh bearer token."""
    token = services.auth().issue(subject, roles=roles, ttl=timedelta(minutes=5)).token
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def post(client: Client, path: str, body: Any, **headers: str) -> Any:
    """POST ``body`` as JSON."""
    return client.post(path, json.dumps(body), content_type="application/json", **headers)


def make_user(client: Client, email: str = "ann@example.com", name: str = "Ann") -> dict:
    """Register a user through the public route and return it."""
    response = post(client, "/v1/users", {"email": email, "name": name})
    assert response.status_code == 200, response.content
    return response.json()


# -- request and response shapes ----------------------------------------------------------


def test_compiling_left_the_hand_written_handlers_untouched(project_app: Any, db: Any) -> None:
    written = (project_app.app_dir / "handlers.py").read_text()
    assert written == (PROJECT / "api" / "handlers.py").read_text()
    assert (
        "    from .generated.models import *  # noqa: F403\n"
        in (project_app.app_dir / "models.py").read_text()
    )


def test_post_body_members_are_the_params_and_200_returns_the_entity(client: Client) -> None:
    user = make_user(client, "bob@example.com", "Bob")
    assert set(user) == {"id", "email", "name", "created_at"}
    assert (user["email"], user["name"]) == ("bob@example.com", "Bob")
    uuid.UUID(user["id"])
    fetched = client.get(f"/v1/users/{user['id']}", **bearer())
    assert fetched.status_code == 200
    assert fetched.json() == user


def test_optional_and_defaulted_members(client: Client) -> None:
    user = make_user(client)
    body = {"user_id": user["id"], "title": "Tea", "quantity": 3}
    order = post(client, "/v1/orders", body, **bearer())
    assert order.status_code == 200, order.content
    data = order.json()
    assert (data["priority"], data["note"], data["paid"]) == ("normal", None, False)
    body |= {"priority": "high", "note": "fragile"}
    data = post(client, "/v1/orders", body, **bearer()).json()
    assert (data["priority"], data["note"]) == ("high", "fragile")


def test_invalid_members_are_400_with_every_field_named(client: Client) -> None:
    response = post(client, "/v1/users", {"email": "not-an-email", "name": ""})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_argument"
    assert set(error["fields"]) == {"email", "name"}
    user = make_user(client)
    body = {"user_id": user["id"], "title": "x" * 201, "quantity": 1001, "priority": "urgent"}
    error = post(client, "/v1/orders", body, **bearer()).json()["error"]
    assert set(error["fields"]) == {"title", "quantity", "priority"}
    missing = post(client, "/v1/orders", {}, **bearer()).json()["error"]
    assert set(missing["fields"]) == {"user_id", "title", "quantity"}  # optional ones may go


def test_path_and_query_parameters_are_validated(client: Client) -> None:
    response = client.get("/v1/users/not-a-uuid", **bearer())
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"id"}
    response = client.get("/v1/orders", **bearer())
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"user_id"}


def test_bad_json_is_400_and_a_body_over_one_mebibyte_is_413(client: Client) -> None:
    bad = client.post("/v1/users", "{not json", content_type="application/json")
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid_argument")
    big = {"email": "big@example.com", "name": "n" * (1024 * 1024)}
    large = post(client, "/v1/users", big)
    assert (large.status_code, large.json()["error"]["code"]) == (413, "payload_too_large")


def test_auth_required_answers_401_without_a_valid_bearer(client: Client) -> None:
    user = make_user(client)
    for headers in (
        {},
        {"HTTP_AUTHORIZATION": "Bearer not-a-token"},
        {"HTTP_AUTHORIZATION": "Basic dXNlcjpwYXNz"},
    ):
        response = client.get(f"/v1/users/{user['id']}", **headers)
        assert response.status_code == 401, headers
        assert response["WWW-Authenticate"] == "Bearer"
        assert response.json() == {
            "error": {"code": "unauthenticated", "message": "authentication required"}
        }
    # HEAD runs the GET handler, so it needs GET's credentials too.
    assert client.head(f"/v1/users/{user['id']}").status_code == 401
    assert client.head(f"/v1/users/{user['id']}", **bearer()).status_code == 200


def test_a_missing_role_is_403_and_the_role_lets_the_call_through(client: Client) -> None:
    user = make_user(client)
    denied = client.delete(f"/v1/users/{user['id']}", **bearer("member"))
    assert (denied.status_code, denied.json()["error"]["code"]) == (403, "permission_denied")
    deleted = client.delete(f"/v1/users/{user['id']}", **bearer("admin"))
    assert deleted.status_code == 200
    assert deleted.json()["id"] == user["id"]
    gone = client.get(f"/v1/users/{user['id']}", **bearer())
    assert (gone.status_code, gone.json()["error"]["code"]) == (404, "not_found")


def test_handler_errors_pass_through_in_the_shared_shape(client: Client) -> None:
    make_user(client, "dup@example.com")
    again = post(client, "/v1/users", {"email": "dup@example.com", "name": "Dup"})
    assert again.status_code == 409
    assert again.json() == {
        "error": {"code": "already_exists", "message": "email already registered"}
    }
    orphan = {"user_id": str(uuid.uuid4()), "title": "t", "quantity": 1}
    assert post(client, "/v1/orders", orphan, **bearer()).status_code == 404


def test_a_message_result_is_serialised(client: Client) -> None:
    user = make_user(client)
    for quantity in (2, 5):
        body = {"user_id": user["id"], "title": "t", "quantity": quantity}
        order = post(client, "/v1/orders", body, **bearer()).json()
    assert client.post(f"/v1/orders/{order['id']}/paid", **bearer()).json()["paid"] is True
    stats = client.get(f"/v1/users/{user['id']}/stats", **bearer())
    assert stats.json() == {"user_id": user["id"], "orders": 2, "paid": 1, "quantity": 7}


# -- pagination ---------------------------------------------------------------------------


def _orders(client: Client, user_id: str, count: int, prefix: str) -> list[str]:
    ids = []
    for i in range(count):
        body = {"user_id": user_id, "title": f"{prefix}{i}", "quantity": 1}
        ids.append(post(client, "/v1/orders", body, **bearer()).json()["id"])
    return ids


def test_pages_are_stable_under_inserts(client: Client) -> None:
    user = make_user(client)
    first_batch = _orders(client, user["id"], 5, "a")
    page = client.get("/v1/orders", {"user_id": user["id"], "limit": 2}, **bearer()).json()
    assert set(page) == {"items", "next_cursor"}
    seen = [o["id"] for o in page["items"]]
    assert seen == first_batch[:2]
    later = _orders(client, user["id"], 3, "b")  # inserted while paging
    cursor = page["next_cursor"]
    while cursor is not None:
        query = {"user_id": user["id"], "limit": 2, "cursor": cursor}
        page = client.get("/v1/orders", query, **bearer()).json()
        seen += [o["id"] for o in page["items"]]
        cursor = page["next_cursor"]
    assert seen == first_batch + later  # nothing skipped, nothing twice


def test_limit_defaults_to_50_and_bad_limits_or_cursors_are_400(client: Client) -> None:
    user = make_user(client)
    _orders(client, user["id"], 51, "o")
    page = client.get("/v1/orders", {"user_id": user["id"]}, **bearer()).json()
    assert len(page["items"]) == 50 and page["next_cursor"] is not None
    for bad in ({"limit": 0}, {"limit": 201}, {"limit": "ten"}, {"cursor": "garbage!"}):
        response = client.get("/v1/orders", {"user_id": user["id"], **bad}, **bearer())
        assert response.status_code == 400, bad
        assert set(response.json()["error"]["fields"]) == set(bad)


# -- the served OpenAPI document ----------------------------------------------------------


def served_document(client: Client) -> dict:
    """Return drf-spectacular's document of the installed app."""
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return json.loads(response.content)


def compiled_document(schema_dir: Path) -> dict:
    """Return the merged document of the ``openapi`` backend."""
    files = generate("openapi", load(schema_dir), BackendOptions())
    return json.loads(files["openapi.json"])


def assert_documents_agree(served: dict, compiled: dict) -> None:
    """Check paths, operations, operationIds, component names and security agree."""

    def operations(doc: dict) -> dict:
        return {
            (path, method): (
                op["operationId"],
                op.get("security"),
                op.get("x-roles"),
                op.get("x-permission"),
            )
            for path, item in doc["paths"].items()
            for method, op in item.items()
        }

    assert operations(served) == operations(compiled)
    assert set(served["components"]["schemas"]) == set(compiled["components"]["schemas"])
    assert served["components"]["securitySchemes"] == compiled["components"]["securitySchemes"]
    assert (served["openapi"], served["info"]["title"]) == ("3.0.3", "toolkit API")
    for path, method in operations(compiled):
        body = compiled["paths"][path][method].get("requestBody")
        if body is not None:
            assert served["paths"][path][method]["requestBody"]["content"] == body["content"]


def test_the_served_document_agrees_with_the_compiled_one(client: Client) -> None:
    assert_documents_agree(served_document(client), compiled_document(PROJECT / "schema"))


@pytest.mark.parametrize("fixture", [*FIXTURES, "background"])
def test_every_fixture_serves_a_document_agreeing_with_the_compiled_one(
    fixture: str, tmp_path: Path
) -> None:
    app = build_app(tmp_path, SCHEMAS / fixture, f"cg_{fixture}")
    with installed(app):
        assert_documents_agree(served_document(Client()), compiled_document(SCHEMAS / fixture))


def test_a_handler_stub_answers_501(tmp_path: Path) -> None:
    app = build_app(tmp_path, SCHEMAS / "every_feature", "cg_stubs")
    with installed(app):
        response = Client().get("/v1/products", {"query": "tea"})
    assert response.status_code == 501
    assert response.json() == {
        "error": {
            "code": "unimplemented",
            "message": "CatalogService.SearchProducts is not implemented yet",
        }
    }


def test_message_parameters_are_validated_as_nested_objects(tmp_path: Path) -> None:
    app = build_app(tmp_path, SCHEMAS / "every_feature", "cg_nested")
    with installed(app):
        client, headers = Client(), bearer()
        bad = {"req": {"customer_id": "nope", "shipping": {"city": ""}, "express": True}}
        response = post(client, "/v1/orders/checkout", bad, **headers)
        good = {
            "req": {
                "customer_id": str(uuid.uuid4()),
                "shipping": {"street": "Main 1", "city": "Delft", "postcode": "2611"},
                "express": False,
            }
        }
        stub = post(client, "/v1/orders/checkout", good, **headers)
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {
        "req.customer_id",
        "req.shipping.street",
        "req.shipping.city",
        "req.shipping.postcode",
    }
    assert stub.status_code == 501  # valid (country took its default): the stub ran


# -- schemathesis -------------------------------------------------------------------------


@pytest.fixture
def served_api(project_app: Any, db: Any) -> Iterator[Any]:
    """Return schemathesis' view of the served document, calling the app over WSGI."""
    # As Django's test client does: keep the test's connection (and transaction) open.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/schema/?format=json", WSGIHandler())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.mark.parametrize(
    ("mode", "examples"), [(GenerationMode.POSITIVE, 150), (GenerationMode.NEGATIVE, 100)]
)
def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    served_api: Any, mode: GenerationMode, examples: int
) -> None:
    """Fuzz every operation, authenticated as an admin, from the served document.

    Valid requests must get documented statuses with bodies matching the document;
    invalid ones (negative mode) must never get a 5xx.
    """
    headers = {"Authorization": bearer("admin")["HTTP_AUTHORIZATION"]}
    checks = [not_a_server_error]
    if mode is GenerationMode.POSITIVE:
        checks += [status_code_conformance, content_type_conformance, response_schema_conformance]

    @given(case=served_api.as_strategy(mode, headers=headers))
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        case.validate_response(case.call(), checks=checks)

    run()
