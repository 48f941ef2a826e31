"""The generated API as DRF viewsets, plain CRUD without handler code, and permission checks.

A schema is compiled into a throw-away app (``django_support.build_app``), installed and
migrated on the test database, and driven through Django's test ``Client``: one viewset
per service wired to the declared paths, the ORM defaults of CRUD rpcs (pagination, 404,
overriding one method in ``handlers.py``), a path shared by two services, and
``permission: check(...)`` answered by the permission battery on the loaded object.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import resolve
from rest_framework.viewsets import ViewSet

from toolkit_batteries import services
from toolkit_codegen.backends._django_common import http_rpcs
from toolkit_codegen.backends.crud import crud_of, crud_service_text, is_crud
from toolkit_codegen.compiler import load_sources

try:
    from .django_support import TOOLKIT_AUTH, build_app, installed, served_schema
    from .test_django_api import assert_documents_agree, compiled_document, served_document
except ImportError:  # rootdir-relative import mode (tests/codegen is not a package)
    from django_support import TOOLKIT_AUTH, build_app, installed, served_schema
    from test_django_api import assert_documents_agree, compiled_document, served_document

SCHEMA = """
// An item of a list, owned by the caller who made it.
entity Item {
  id: uuid @primary
  title: string @validate(min_len: 1, max_len: 100)
  owner: string
  size: int32 @default(1)
  note: string?
  created_at: timestamp @default(now())
}

entity Tag {
  id: uuid @primary
  label: string
}

service ItemService {
  rpc CreateItem(
    title: string @validate(min_len: 1, max_len: 100), owner: string, size: int32?, note: string?
  ) -> Item {
    http: POST "/v1/items"
    auth: none
  }
  rpc GetItem(id: uuid) -> Item { http: GET "/v1/items/{id}"; auth: none }
  rpc ListItems() -> Item { http: GET "/v1/items"; auth: none; paginated: true }
  rpc UpdateItem(
    id: uuid, title: string? @validate(min_len: 1, max_len: 100), note: string?
  ) -> Item {
    http: PATCH "/v1/items/{id}"
    auth: none
  }
  rpc DeleteItem(id: uuid) -> Item { http: DELETE "/v1/items/{id}"; auth: none }
  rpc Rename(id: uuid, title: string) -> Item {
    http: PUT "/v1/items/{id}/title"
    permission: check("item.edit", resource: Item, owner_field: owner)
  }
  rpc Audit() -> Item {
    http: GET "/v1/audit"
    auth: required
    permission: check("item.audit")
  }
}

service TagService {
  rpc ListTags() -> Tag { http: GET "/v1/tags"; auth: none; paginated: true }
}

service TagWriter {
  rpc MakeTag(label: string) -> Tag { http: POST "/v1/tags"; auth: required(roles: {admin}) }
}
"""

#: handlers.py as a user writes it: GetItem replaced, everything else left to defaults.
HANDLERS = '''\
"""Hand-written: GetItem answers the title upper-cased; the other CRUD rpcs use defaults."""

from toolkit_batteries.http import ApiError

from . import models


class ItemService:
    def get_item(self, request, *, id):
        item = models.Item.objects.filter(pk=id).first()
        if item is None:
            raise ApiError(404, "not_found", "no item here")
        item.title = item.title.upper()
        return item

    def rename(self, request, *, id, title):
        item = models.Item.objects.get(pk=id)
        item.title = title
        item.save(update_fields=["title"])
        return item

    def audit(self, request):
        return models.Item.objects.order_by("created_at").first()


class TagService:
    pass


class TagWriter:
    def make_tag(self, request, *, label):
        return models.Tag.objects.create(label=label)
'''

#: The permission battery: only an item's owner may rename it; only auditors audit.
PERMISSION = {
    "adapter": "rbac",
    "options": {
        "rules": [
            {"Role": "*", "Action": "item.edit", "OwnedOnly": True, "OwnedAttr": "owner"},
            {"Role": "auditor", "Action": "item.audit"},
        ]
    },
}


@pytest.fixture(scope="module")
def app(
    tmp_path_factory: pytest.TempPathFactory, django_db_setup: Any, django_db_blocker: Any
) -> Iterator[Any]:
    """Compile SCHEMA with HANDLERS into an installed, migrated app."""
    root = tmp_path_factory.mktemp("viewsets")
    toolkit = {**TOOLKIT_AUTH, "permission": PERMISSION}
    with served_schema(root, SCHEMA, "vs", django_db_blocker, HANDLERS, toolkit) as built:
        yield built


@pytest.fixture
def client(app: Any, db: Any) -> Client:
    return Client()


def bearer(subject: str, *roles: str) -> dict[str, str]:
    token = services.auth().issue(subject, roles=roles, ttl=timedelta(minutes=5)).token
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def send(client: Client, method: str, path: str, body: Any = None, **headers: str) -> Any:
    data = json.dumps(body) if body is not None else ""
    call = getattr(client, method.lower())
    return call(path, data, content_type="application/json", **headers)


def make(client: Client, title: str, owner: str = "ann", **extra: Any) -> dict:
    response = send(client, "POST", "/v1/items", {"title": title, "owner": owner, **extra})
    assert response.status_code == 200, response.content
    return response.json()


# -- the DRF shape ------------------------------------------------------------------------


def test_each_service_is_one_viewset_and_each_rpc_an_action(app: Any) -> None:
    views = __import__(f"{app.module}.generated.views", fromlist=["*"])
    viewset = views.ItemServiceViewSet
    assert issubclass(viewset, ViewSet)
    for action in ("create_item", "get_item", "list_items", "update_item", "delete_item"):
        assert callable(getattr(viewset, action))
    collection, one = resolve("/v1/items"), resolve(f"/v1/items/{uuid.uuid4()}")
    assert (collection.func.cls, collection.func.actions) == (
        viewset,
        {"get": "list_items", "post": "create_item", "head": "list_items"},
    )
    assert one.func.cls is viewset
    assert one.func.actions == {
        "get": "get_item",
        "patch": "update_item",
        "delete": "delete_item",
        "head": "get_item",
    }
    assert resolve("/v1/items/x/title").url_name == "v1_items_id_title"


def test_a_path_of_two_services_serves_both(client: Client) -> None:
    tags = resolve("/v1/tags")
    assert tags.func.actions == {"get": "list_tags", "post": "make_tag", "head": "list_tags"}
    denied = send(client, "POST", "/v1/tags", {"label": "x"}, **bearer("bob"))
    assert denied.status_code == 403  # TagWriter's roles, not TagService's public access
    made = send(client, "POST", "/v1/tags", {"label": "red"}, **bearer("bob", "admin"))
    assert made.status_code == 200 and made.json()["label"] == "red"
    listed = client.get("/v1/tags").json()
    assert [t["label"] for t in listed["items"]] == ["red"]
    assert client.options("/v1/tags")["Allow"] == "GET, POST, OPTIONS"


def test_operations_are_grouped_per_service_and_the_document_agrees(
    client: Client, app: Any
) -> None:
    served = served_document(client)
    assert_documents_agree(served, compiled_document(app.schema_dir))
    tags = {
        op["operationId"]: op["tags"] for item in served["paths"].values() for op in item.values()
    }
    assert tags["ItemService_GetItem"] == ["ItemService"]
    assert tags["TagService_ListTags"] == ["TagService"]
    assert tags["TagWriter_MakeTag"] == ["TagWriter"]
    get_item = served["paths"]["/v1/items/{id}"]["get"]["responses"]
    assert "404" in get_item


def test_unknown_methods_are_405_with_the_allow_header(client: Client) -> None:
    response = client.put("/v1/items")
    assert response.status_code == 405
    assert response["Allow"] == "GET, POST, OPTIONS"


# -- plain CRUD without handler code ------------------------------------------------------


def test_crud_rpcs_get_no_stub_and_handlers_override_one_method(client: Client, app: Any) -> None:
    written = (app.app_dir / "handlers.py").read_text()
    assert "def create_item" not in written and "def list_tags" not in written
    item = make(client, "milk", size=3)
    assert (item["title"], item["size"], item["note"], item["owner"]) == ("milk", 3, None, "ann")
    fetched = client.get(f"/v1/items/{item['id']}").json()
    assert fetched["title"] == "MILK"  # the hand-written get_item ran
    missing = client.get(f"/v1/items/{uuid.uuid4()}")
    assert (missing.status_code, missing.json()["error"]["message"]) == (404, "no item here")


def test_create_takes_defaults_and_validates(client: Client) -> None:
    item = make(client, "bread")
    assert item["size"] == 1  # @default(1)
    bad = send(client, "POST", "/v1/items", {"title": "", "owner": "ann"})
    assert bad.status_code == 400 and set(bad.json()["error"]["fields"]) == {"title"}


def test_update_patches_only_what_is_given_and_404s_an_unknown_id(client: Client) -> None:
    item = make(client, "eggs", note="free range")
    changed = send(client, "PATCH", f"/v1/items/{item['id']}", {"title": "duck eggs"})
    assert changed.status_code == 200
    assert (changed.json()["title"], changed.json()["note"]) == ("duck eggs", "free range")
    gone = send(client, "PATCH", f"/v1/items/{uuid.uuid4()}", {"title": "x"})
    assert (gone.status_code, gone.json()["error"]) == (
        404,
        {"code": "not_found", "message": "no such item"},
    )


def test_delete_answers_the_row_then_404(client: Client) -> None:
    item = make(client, "jam")
    deleted = client.delete(f"/v1/items/{item['id']}")
    assert deleted.status_code == 200 and deleted.json()["id"] == item["id"]
    again = client.delete(f"/v1/items/{item['id']}")
    assert again.status_code == 404


def test_list_pages_in_a_stable_order_under_inserts(client: Client) -> None:
    first = [make(client, f"a{i}")["id"] for i in range(5)]
    page = client.get("/v1/items", {"limit": 2}).json()
    seen = [i["id"] for i in page["items"]]
    later = [make(client, f"b{i}")["id"] for i in range(3)]
    while page["next_cursor"] is not None:
        page = client.get("/v1/items", {"limit": 2, "cursor": page["next_cursor"]}).json()
        seen += [i["id"] for i in page["items"]]
    assert seen == first + later
    forged = client.get("/v1/items", {"cursor": "eyJrIjpbXX0"})
    assert forged.status_code == 400 and forged.json()["error"]["fields"] == {"cursor": ["invalid"]}


# -- permission: check(...) ---------------------------------------------------------------


def test_permission_check_on_the_loaded_object(client: Client) -> None:
    item = make(client, "tea", owner="ann")
    path = f"/v1/items/{item['id']}/title"
    anonymous = send(client, "PUT", path, {"title": "green tea"})
    assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (401, "unauthenticated")
    other = send(client, "PUT", path, {"title": "green tea"}, **bearer("bob"))
    # bob may not read ann's item (no GET rpc grants it): as an unknown id, a 404
    assert (other.status_code, other.json()["error"]["code"]) == (404, "not_found")
    owner = send(client, "PUT", path, {"title": "green tea"}, **bearer("ann"))
    assert owner.status_code == 200 and owner.json()["title"] == "green tea"
    unknown = send(
        client, "PUT", f"/v1/items/{uuid.uuid4()}/title", {"title": "x"}, **bearer("ann")
    )
    assert unknown.status_code == 404


def test_permission_check_without_a_resource(client: Client) -> None:
    make(client, "coffee")
    assert client.get("/v1/audit", **bearer("ann")).status_code == 403
    allowed = client.get("/v1/audit", **bearer("ann", "auditor"))
    assert allowed.status_code == 200 and allowed.json()["title"] == "coffee"


# -- the CRUD rule ------------------------------------------------------------------------

RULE_BASE = """
entity Note {
  id: uuid @primary
  title: string
  body: string?
  done: bool @default(false)
  created_at: timestamp @default(now())
}
"""


def _kinds(rpcs: str) -> dict[str, str | None]:
    loaded = load_sources({"app.toolkit": RULE_BASE + "service S {\n" + rpcs + "\n}\n"})
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    out = {}
    for ref in http_rpcs(loaded.schema):
        found = crud_of(loaded.schema, ref)
        out[ref.rpc.name] = found.kind if found else None
    return out


def test_crud_rule_recognises_the_five_shapes() -> None:
    kinds = _kinds("""
  rpc C(title: string, body: string?) -> Note { http: POST "/n"; auth: none }
  rpc G(id: uuid) -> Note { http: GET "/n/{id}"; auth: none }
  rpc L() -> Note { http: GET "/n"; auth: none; paginated: true }
  rpc U(id: uuid, done: bool) -> Note { http: PUT "/n/{id}"; auth: none }
  rpc D(id: uuid) -> Note { http: DELETE "/n/{id}"; auth: none }
""")
    assert kinds == {"C": "create", "G": "get", "L": "list", "U": "update", "D": "delete"}


def test_crud_rule_refuses_other_shapes() -> None:
    kinds = _kinds("""
  rpc MissingRequired(body: string?) -> Note { http: POST "/a"; auth: none }
  rpc NotAField(title: string, colour: string) -> Note { http: POST "/b"; auth: none }
  rpc WrongType(title: int32) -> Note { http: POST "/c"; auth: none }
  rpc ExtraParam(id: uuid, full: bool) -> Note { http: GET "/d/{id}"; auth: none }
  rpc NotTheKey(title: string) -> Note { http: GET "/e/{title}"; auth: none }
  rpc FilteredList(done: bool) -> Note { http: GET "/f"; auth: none; paginated: true }
  rpc UnpagedList() -> Note { http: GET "/g"; auth: none }
  rpc UpdateNothing(id: uuid) -> Note { http: PATCH "/h/{id}"; auth: none }
""")
    assert set(kinds.values()) == {None}, kinds


def test_crud_service_text_compiles_to_five_crud_rpcs() -> None:
    loaded = load_sources({"app.toolkit": RULE_BASE})
    text = crud_service_text(loaded.schema.entity("Note"))
    again = load_sources({"app.toolkit": RULE_BASE + "\n" + text})
    assert again.ok, [str(d) for d in again.diagnostics]
    refs = http_rpcs(again.schema)
    assert [r.rpc.name for r in refs] == [
        "CreateNote",
        "GetNote",
        "ListNotes",
        "UpdateNote",
        "DeleteNote",
    ]
    assert all(is_crud(again.schema, r) for r in refs)
    assert [(r.method, r.path) for r in refs] == [
        ("POST", "/v1/notes"),
        ("GET", "/v1/notes/{id}"),
        ("GET", "/v1/notes"),
        ("PATCH", "/v1/notes/{id}"),
        ("DELETE", "/v1/notes/{id}"),
    ]


def test_crud_defaults_answer_without_any_handler_code(
    tmp_path: Path, django_db_setup: Any, django_db_blocker: Any
) -> None:
    schema_dir = tmp_path / "schema"
    schema_dir.mkdir()
    loaded = load_sources({"app.toolkit": RULE_BASE})
    service = crud_service_text(loaded.schema.entity("Note"))
    service = service.replace("auth: required", "auth: none")
    (schema_dir / "app.toolkit").write_text(RULE_BASE + "\n" + service)
    app = build_app(tmp_path / "app", schema_dir, "cg_crud_only")
    assert "raise NotImplementedError" not in (app.app_dir / "handlers.py").read_text()
    with installed(app, django_db_blocker), django_db_blocker.unblock():
        client = Client()
        made = send(client, "POST", "/v1/notes", {"title": "t"})
        assert made.status_code == 200, made.content
        note = made.json()
        assert (note["done"], note["body"]) == (False, None)
        assert client.get(f"/v1/notes/{note['id']}").json() == note
        listed = client.get("/v1/notes").json()
        assert listed == {"items": [note], "next_cursor": None}
        patched = send(client, "PATCH", f"/v1/notes/{note['id']}", {"done": True}).json()
        assert patched["done"] is True and patched["title"] == "t"
        assert client.delete(f"/v1/notes/{note['id']}").status_code == 200
        assert client.get(f"/v1/notes/{note['id']}").status_code == 404


# -- the fast paths answer what DRF answers -----------------------------------------------


def test_fast_serialisation_and_validation_equal_drf(app: Any, db: Any) -> None:
    from django.utils import timezone
    from rest_framework.exceptions import ValidationError

    from toolkit_batteries.api_runtime.views import _codec

    s = __import__(f"{app.module}.generated.serializers", fromlist=["*"])
    models = __import__(f"{app.module}.models", fromlist=["*"])
    item = models.Item.objects.create(title="t", owner="ann", note=None)
    item = models.Item.objects.get(pk=item.pk)  # as a handler loads it (aware UTC)
    for zone in ("UTC", "Europe/Amsterdam", "America/Chicago"):
        with timezone.override(zone):
            fast = _codec(s.ItemSerializer).represent(item)
            assert fast == s.ItemSerializer().to_representation(item), zone
    assert fast["created_at"].endswith("Z")  # a timestamp is answered in UTC, any zone
    request = s.ItemServiceCreateItemRequestSerializer
    for data in (
        {"title": "a", "owner": "ann"},
        {"title": "a", "owner": "ann", "size": 2, "note": None},
        {"title": "", "owner": 5, "size": "x"},
        {},
    ):
        try:
            expected: Any = request().run_validation(data)
            expected = {name: expected.get(name) for name in request().fields}
        except ValidationError as exc:
            expected = exc.detail
        try:
            got: Any = _codec(request).validate(dict(data))
        except ValidationError as exc:
            got = exc.detail
        assert got == expected, data
