"""The generated API accepts exactly what its served OpenAPI document allows.

Two apps are compiled and installed: the template project's schema (with its handlers)
and a schema using every scalar type, a ``belongs_to`` and a ``many_to_many`` relation and
pagination (plain CRUD: the ORM defaults serve it). Schemathesis reaches them over HTTP
(pytest-django's live server), as its CLI would. Plain HTTP tests pin the
strictness (no number/string coercion, NUL, cursor); schemathesis, a client none of us
wrote, drives every operation from ``/api/schema/`` with every check on.
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.test import Client

from toolkit_batteries import services

try:
    from .django_support import ROOT, build_app, installed
except ImportError:  # rootdir-relative import mode (tests/codegen is not a package)
    from django_support import ROOT, build_app, installed

TEMPLATE = ROOT / "project_template"

EVERY_TYPE = """\
enum Size { small, large }

entity Team {
  id: uuid @primary
  name: string @validate(min_len: 1, max_len: 40)
  created_at: timestamp @default(now())
  has_many gadgets: Gadget @foreign_key(team_id)
}

entity Label {
  id: uuid @primary
  text: string @validate(min_len: 1, max_len: 20)
  many_to_many gadgets: Gadget { join_table: gadget_labels }
}

entity Gadget {
  id: uuid @primary
  team_id: uuid
  title: string @validate(min_len: 1, max_len: 50)
  note: string? @validate(max_len: 100)
  contact: string @validate(format: "email", max_len: 100)
  ref: string @validate(format: "uuid")
  count32: int32 @validate(gte: 0, lte: 1000)
  count64: int64
  ratio32: float32 @validate(gt: 0, lt: 1)
  ratio64: float64
  active: bool
  blob: bytes
  extra: json
  due: date
  at: timestamp
  size: Size
  shade: enum(light, dark)
  created_at: timestamp @default(now())
  belongs_to team: Team @foreign_key(team_id) @on_delete(cascade)
  many_to_many labels: Label { join_table: gadget_labels }
}

service TeamService {
  rpc CreateTeam(name: string @validate(min_len: 1, max_len: 40)) -> Team {
    http: POST "/v1/teams"
    auth: required
  }
  rpc GetTeam(id: uuid) -> Team {
    http: GET "/v1/teams/{id}"
    auth: required
    errors: { not_found }
  }
  rpc ListTeams() -> Team {
    http: GET "/v1/teams"
    auth: required
    paginated: true
  }
}

service GadgetService {
  rpc CreateGadget(
    team_id: uuid,
    title: string @validate(min_len: 1, max_len: 50),
    note: string? @validate(max_len: 100),
    contact: string @validate(format: "email", max_len: 100),
    ref: string @validate(format: "uuid"),
    count32: int32 @validate(gte: 0, lte: 1000),
    count64: int64,
    ratio32: float32 @validate(gt: 0, lt: 1),
    ratio64: float64,
    active: bool,
    blob: bytes,
    extra: json,
    due: date,
    at: timestamp,
    size: Size,
    shade: enum(light, dark),
  ) -> Gadget {
    http: POST "/v1/gadgets"
    auth: required
    errors: { not_found }
  }
  rpc GetGadget(id: uuid) -> Gadget {
    http: GET "/v1/gadgets/{id}"
    auth: required
    errors: { not_found }
  }
  rpc ListGadgets() -> Gadget {
    http: GET "/v1/gadgets"
    auth: required
    paginated: true
  }
  rpc UpdateGadget(
    id: uuid,
    title: string? @validate(min_len: 1, max_len: 50),
    count32: int32? @validate(gte: 0, lte: 1000),
    active: bool?,
  ) -> Gadget {
    http: PATCH "/v1/gadgets/{id}"
    auth: required
    errors: { not_found }
  }
  rpc DeleteGadget(id: uuid) -> Gadget {
    http: DELETE "/v1/gadgets/{id}"
    auth: required
    errors: { not_found }
  }
}
"""


def _template_app(tmp: Path) -> Any:
    """Compile the template project's schema with its handlers (template tags rendered)."""
    schema_dir = tmp / "schema"
    schema_dir.mkdir()
    (schema_dir / "app.toolkit").write_text((TEMPLATE / "schema" / "app.toolkit").read_text())
    handlers = tmp / "handlers.py"
    text = (TEMPLATE / "api" / "handlers.py-tpl").read_text()
    handlers.write_text(text.replace("{{ project_name }}", "demo"))
    return build_app(tmp / "app", schema_dir, "api", handlers=handlers)


def _every_type_app(tmp: Path) -> Any:
    schema_dir = tmp / "schema"
    schema_dir.mkdir()
    (schema_dir / "app.toolkit").write_text(EVERY_TYPE)
    return build_app(tmp / "app", schema_dir, "api")


@pytest.fixture(scope="module", params=["template", "every_type"])
def served(
    request: Any,
    tmp_path_factory: pytest.TempPathFactory,
    django_db_setup: Any,
    django_db_blocker: Any,
) -> Iterator[str]:
    """Compile and install one app; yield its name."""
    tmp = tmp_path_factory.mktemp(f"conformance_{request.param}")
    app = _template_app(tmp) if request.param == "template" else _every_type_app(tmp)
    with installed(app, django_db_blocker):
        yield request.param


def bearer(subject: str = "user-1") -> dict[str, str]:
    """Return request headers with a fresh bearer token."""
    token = services.auth().issue(subject, roles=("admin",), ttl=timedelta(minutes=5)).token
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def post(client: Client, path: str, body: Any) -> Any:
    """POST ``body`` as JSON with a bearer token."""
    return client.post(path, json.dumps(body), content_type="application/json", **bearer())


@pytest.fixture
def api(served: str, live_server: Any, transactional_db: Any) -> str:
    """Return the URL of the served document, over a real HTTP server (as the CLI calls it).

    Over WSGI, schemathesis 4.32's ``ignored_auth`` probe hands werkzeug a
    ``max_redirects`` argument it does not take; over HTTP every check runs.
    """
    del served, transactional_db
    return f"{live_server.url}/api/schema/?format=json"


STATEFUL = os.environ.get("TOOLKIT_SCHEMATHESIS_STATEFUL") == "1"
#: Checks left out, each with the documented reason it cannot hold for these apps.
EXCLUDED_CHECKS: dict[str, str] = {}
#: Per operation: (coverage-phase checks left out, why). Schemathesis' coverage phase
#: does not apply the pinned body values, so its "valid" CreateGadget names a team that
#: does not exist (400 on ``team_id``, by design); the fuzzing phase pins an existing team
#: and keeps ``positive_data_acceptance`` on.
COVERAGE_EXCLUSIONS = {"GadgetService_CreateGadget": ("positive_data_acceptance",)}


def server_values(app: str) -> dict[str, str]:
    """Return the parameters only the server can mint, made through the API.

    Two things no schema can express are pinned to real values: a cursor (the document
    states its format, but a well-formed cursor the server did not sign is refused, 400,
    by design) and a ``belongs_to`` column (``team_id`` must name an existing team: 400
    on ``team_id`` otherwise). Every other value is generated.
    """
    client = Client()
    path, body = "/v1/notes", {"title": "a"}
    if app != "template":
        path, body = "/v1/teams", {"name": "a"}
    rows = [post(client, path, body) for _ in range(2)]
    assert [row.status_code for row in rows] == [200, 200]
    page = client.get(path, {"limit": 1}, **bearer()).json()
    assert page["next_cursor"], page
    values = {"query.cursor": page["next_cursor"]}
    if app != "template":
        values["body.team_id"] = rows[0].json()["id"]
    return values


def run_schemathesis(api_url: str, mode: str, parameters: dict[str, str]) -> list[str]:
    """Run schemathesis' engine (what ``st run --checks all`` runs); return every failure."""
    from schemathesis.config import SchemathesisConfig
    from schemathesis.engine import Status, events, from_schema

    config = SchemathesisConfig.from_dict(
        {
            "headers": {"Authorization": bearer()["HTTP_AUTHORIZATION"]},
            "seed": 19,
            "parameters": parameters,
            "generation": {"mode": mode, "max-examples": 25, "deterministic": True},
            "checks": {
                "enabled": True,
                **{name: {"enabled": False} for name in EXCLUDED_CHECKS},
            },
            # The stateful phase (chains of calls through the document's links) passes too
            # but takes four minutes here; TOOLKIT_SCHEMATHESIS_STATEFUL=1 turns it on.
            "phases": {"stateful": {"enabled": STATEFUL, "max-steps": 20}},
            "operations": [
                {
                    "include-operation-id": operation,
                    "phases": {
                        "coverage": {"checks": {name: {"enabled": False} for name in names}}
                    },
                }
                for operation, names in COVERAGE_EXCLUSIONS.items()
            ],
        }
    )
    schema = schemathesis.openapi.from_url(api_url, config=config)
    failures: list[str] = []
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for case_id, nodes in event.recorder.checks.items():
                for node in nodes:
                    if node.status == Status.FAILURE:
                        case = event.recorder.cases[case_id].value
                        interaction = event.recorder.interactions.get(case_id)
                        answer = (
                            f"{interaction.response.status_code} "
                            f"{interaction.response.content[:160]!r}"
                            if interaction is not None and interaction.response is not None
                            else "no response"
                        )
                        failure = node.failure_info.failure if node.failure_info else None
                        failures.append(
                            f"{node.name} ({getattr(failure, 'message', '')[:300]}): "
                            f"{case.method} {case.formatted_path} "
                            f"query={case.query!r} body={case.body!r} -> {answer}"
                        )
        elif isinstance(event, (events.NonFatalError, events.FatalError)):
            error = getattr(event, "value", event)
            failures.append(f"error: {error!r} {''.join(traceback.format_exception(error))}")
    return failures


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_schemathesis_with_every_check_passes_on_the_served_document(
    served: str, api: str, mode: str
) -> None:
    """Every operation, authenticated, driven from the served document with every check."""
    failures = run_schemathesis(api, mode, server_values(served))
    assert not failures, "\n".join(sorted(set(failures))[:40])


# -- strictness, through HTTP ----------------------------------------------------------------

every_type = pytest.mark.parametrize("served", ["every_type"], indirect=True)
template = pytest.mark.parametrize("served", ["template"], indirect=True)


def a_gadget(team: str, /, **changes: Any) -> dict[str, Any]:
    """Return a valid CreateGadget body (every scalar type), with ``changes`` applied."""
    body = {
        "team_id": team,
        "title": "lamp",
        "contact": "ann@example.com",
        "ref": "6f1c3b1e-8e0b-4b5e-9f3a-0c2d8e9a7b10",
        "count32": 3,
        "count64": 2**40,
        "ratio32": 0.5,
        "ratio64": -1.25,
        "active": True,
        "blob": "aGk=",
        "extra": {"k": [1, "two"]},
        "due": "2026-01-31",
        "at": "2026-01-31T12:00:00+02:00",
        "size": "small",
        "shade": "dark",
    }
    body.update(changes)
    return body


@pytest.fixture
def team_id(served: str, db: Any) -> str:
    """Return the id of a team made through the API."""
    response = post(Client(), "/v1/teams", {"name": "core"})
    assert response.status_code == 200, response.content
    return response.json()["id"]


def fields_of(response: Any) -> set[str]:
    """Return the field names a 400 names."""
    assert response.status_code == 400, response.content
    return set(response.json()["error"].get("fields", {}))


@template
def test_a_number_for_a_string_is_400_on_that_field(served: str, db: Any) -> None:
    response = post(Client(), "/v1/notes", {"title": 0})
    assert fields_of(response) == {"title"}
    assert "0" not in response.content.decode().replace('"0"', "")  # the value is not echoed


@every_type
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("title", 0),
        ("title", True),
        ("contact", 1),
        ("ref", 2**100),
        ("count32", "3"),
        ("count64", "12"),
        ("count32", 2.5),
        ("count32", True),
        ("ratio64", "1.5"),
        ("ratio64", False),
        ("active", "true"),
        ("active", 1),
        ("blob", 7),
        ("due", 20260131),
        ("due", "20260131"),
        ("at", "2026-01-31T12:00:00"),
        ("at", 1769860800),
        ("team_id", 1),
        ("team_id", "6f1c3b1e8e0b4b5e9f3a0c2d8e9a7b10"),
        ("size", 0),
        ("extra", None),
    ],
)
def test_no_coercion_across_json_types(team_id: str, name: str, value: Any) -> None:
    """Each scalar type takes its own JSON type only: anything else is 400 on the field."""
    assert fields_of(post(Client(), "/v1/gadgets", a_gadget(team_id, **{name: value}))) == {name}


@every_type
def test_every_scalar_type_is_accepted_in_its_own_json_type(team_id: str) -> None:
    response = post(Client(), "/v1/gadgets", a_gadget(team_id, count32=7.0))
    assert response.status_code == 200, response.content
    gadget = response.json()
    assert gadget["count32"] == 7
    assert gadget["at"] == "2026-01-31T10:00:00Z"  # answered in UTC (RFC 3339)
    assert gadget["extra"] == {"k": [1, "two"]}


@every_type
def test_a_body_of_optional_members_may_be_absent(team_id: str) -> None:
    gadget = post(Client(), "/v1/gadgets", a_gadget(team_id)).json()
    response = Client().patch(f"/v1/gadgets/{gadget['id']}", **bearer())
    assert response.status_code == 200, response.content
    assert response.json()["title"] == "lamp"


@template
def test_an_empty_limit_is_400_and_numbers_in_query_strings_still_parse(
    served: str, db: Any
) -> None:
    client = Client()
    assert fields_of(client.get("/v1/notes", {"limit": ""}, **bearer())) == {"limit"}
    assert fields_of(client.get("/v1/notes", {"limit": "+5"}, **bearer())) == {"limit"}
    assert client.get("/v1/notes", {"limit": "5"}, **bearer()).status_code == 200


@every_type
def test_the_served_document_states_what_the_server_enforces(served: str, db: Any) -> None:
    """NUL refused, cursor format, exclusive float bounds and non-null json are in the document."""
    import re

    doc = Client().get("/api/schema/?format=json").json()
    gadget = doc["components"]["schemas"]["default_GadgetServiceCreateGadgetRequest"]
    props = gadget["properties"]
    for name in ("title", "note", "contact"):  # ref: a uuid, which cannot hold NUL
        pattern = re.compile(props[name]["pattern"])
        assert pattern.search("a\x00b") is None and pattern.search("ab"), name
    assert fields_of(post(Client(), "/v1/teams", {"name": "a\x00b"})) == {"name"}
    assert (props["ratio32"]["minimum"], props["ratio32"]["exclusiveMinimum"]) == (0, True)
    assert (props["ratio32"]["maximum"], props["ratio32"]["exclusiveMaximum"]) == (1, True)
    assert {"type": "object"} in props["extra"]["anyOf"]
    assert all(branch.get("type") != "null" for branch in props["extra"]["anyOf"])
    params = {p["name"]: p for p in doc["paths"]["/v1/gadgets"]["get"]["parameters"]}
    cursor = re.compile(params["cursor"]["schema"]["pattern"])
    assert cursor.search("") and not cursor.search("anything")
    assert fields_of(Client().get("/v1/gadgets", {"cursor": "anything"}, **bearer())) == {"cursor"}
