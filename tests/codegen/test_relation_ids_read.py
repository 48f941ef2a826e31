"""Many-to-many ids in responses are the caller's to read; handlers get the write check.

A compiled app (tags owned by their maker, read owner-only; notes anyone signed in may
read, tagged by ``many_to_many``) served by Django's test client with two accounts:

- a note's ``tags`` list only the tags its reader may read, on a get and on every row of
  a list page, for the CRUD defaults and for a hand-written handler alike;
- a list page loads the ids in one query per relation: a page of six notes costs the
  same number of queries as a page of one;
- a hand-written handler calls ``crud.check_references`` / ``crud.check_owner`` (the
  app's ``READS`` found from the model) and answers the CRUD defaults' 400s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from toolkit_batteries import services

try:
    from .django_support import TOOLKIT_AUTH, served_schema
except ImportError:  # rootdir-relative import mode (tests/codegen is not a package)
    from django_support import TOOLKIT_AUTH, served_schema

SCHEMA = """
entity Tag {
  id: uuid @primary
  label: string
  owner: string
}

entity Note {
  id: uuid @primary
  title: string
  owner: string
  created_at: timestamp @default(now())
  many_to_many tags: Tag { join_table: note_tags }
}

service NoteService {
  rpc CreateTag(label: string, owner: string) -> Tag { http: POST "/v1/tags"; auth: required }
  rpc GetTag(id: uuid) -> Tag {
    http: GET "/v1/tags/{id}"
    permission: check("tag.read", resource: Tag, owner_field: owner)
  }
  rpc GetNote(id: uuid) -> Note { http: GET "/v1/notes/{id}"; auth: required }
  rpc ListNotes() -> Note { http: GET "/v1/notes"; auth: required; paginated: true }
  rpc FileNote(title: string, owner: string, tags: [uuid], pinned: bool) -> Note {
    http: POST "/v1/notes/filed"
    auth: required
  }
  rpc TagNote(id: uuid, tags: [uuid], force: bool) -> Note {
    http: PUT "/v1/notes/{id}/tags"
    auth: required
  }
}
"""

#: Hand-written (not plain CRUD: ``pinned`` and ``force`` are no fields): the public checks.
HANDLERS = """\
from toolkit_batteries.api_runtime import crud

from . import models


class NoteService:
    def file_note(self, request, *, title, owner, tags, pinned):
        crud.check_references(models.Note, {"tags": tags}, request)
        note = models.Note.objects.create(title=title, owner=owner)
        note.tags.set(tags)
        return note

    def tag_note(self, request, *, id, tags, force):
        note = models.Note.objects.get(pk=id)
        note.tags.set(tags)  # no check: what the served answer then lists is still filtered
        return note
"""

PERMISSION = {
    "adapter": "rbac",
    "options": {"rules": [{"Role": "*", "Action": "tag.read", "OwnedOnly": True}]},
}


@pytest.fixture(scope="module")
def app(
    tmp_path_factory: pytest.TempPathFactory, django_db_setup: Any, django_db_blocker: Any
) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("relation_reads")
    toolkit = {**TOOLKIT_AUTH, "permission": PERMISSION}
    with served_schema(root, SCHEMA, "rr", django_db_blocker, HANDLERS, toolkit) as built:
        yield built


@pytest.fixture
def client(app: Any, db: Any) -> Client:
    return Client()


def bearer(subject: str) -> dict[str, str]:
    token = services.auth().issue(subject, roles=(), ttl=timedelta(minutes=5)).token
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def send(client: Client, method: str, path: str, body: Any = None, who: str = "ann") -> Any:
    call = getattr(client, method.lower())
    data = json.dumps(body) if body is not None else ""
    return call(path, data, content_type="application/json", **bearer(who))


def tag(client: Client, owner: str) -> str:
    made = send(client, "POST", "/v1/tags", {"label": "t", "owner": owner}, who=owner)
    assert made.status_code == 200, made.content
    return made.json()["id"]


def models_of(app: Any) -> Any:
    return __import__(f"{app.module}.models", fromlist=["*"])


def note(app: Any, owner: str, tags: list[str]) -> str:
    """Make a note through the ORM (as an admin or a migration would), tagged as given."""
    row = models_of(app).Note.objects.create(title="n", owner=owner)
    row.tags.set(tags)
    return str(row.pk)


def test_a_note_lists_only_the_tags_its_reader_may_read(client: Client, app: Any) -> None:
    anns, bobs = tag(client, "ann"), tag(client, "bob")
    shared = note(app, "ann", [anns, bobs])
    seen = {}
    for who in ("ann", "bob"):
        got = send(client, "GET", f"/v1/notes/{shared}", who=who)
        assert got.status_code == 200, got.content
        seen[who] = got.json()["tags"]
    assert seen == {"ann": [anns], "bob": [bobs]}
    # A hand-written handler's answer is filtered the same way (the view does it).
    both = sorted([anns, bobs])
    answered = send(client, "PUT", f"/v1/notes/{shared}/tags", {"tags": both, "force": True})
    assert answered.status_code == 200, answered.content
    assert answered.json()["tags"] == [anns]
    assert (
        sorted(
            str(t)
            for t in models_of(app).Note.objects.get(pk=shared).tags.values_list("pk", flat=True)
        )
        == both
    )  # the rows are all there: only the answer is the caller's


def test_a_list_page_filters_each_row_in_one_query_per_relation(client: Client, app: Any) -> None:
    anns, bobs = tag(client, "ann"), tag(client, "bob")
    note(app, "ann", [anns, bobs])
    page = send(client, "GET", "/v1/notes", who="bob").json()
    assert [row["tags"] for row in page["items"]] == [[bobs]]
    with CaptureQueriesContext(connection) as one:
        assert send(client, "GET", "/v1/notes", who="bob").status_code == 200
    for _ in range(5):
        note(app, "ann", [anns, bobs])
    with CaptureQueriesContext(connection) as six:
        page = send(client, "GET", "/v1/notes", who="bob").json()
    assert [row["tags"] for row in page["items"]] == [[bobs]] * 6
    assert len(six.captured_queries) == len(one.captured_queries), [
        q["sql"] for q in six.captured_queries
    ]


def test_a_hand_written_handler_refuses_an_unreadable_id_with_the_public_check(
    client: Client, app: Any
) -> None:
    anns, bobs = tag(client, "ann"), tag(client, "bob")
    body = {"title": "x", "owner": "bob", "pinned": False}
    refused = send(client, "POST", "/v1/notes/filed", {**body, "tags": [anns]}, who="bob")
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"]["fields"] == {"tags": ["every id must name an existing tag"]}
    assert not models_of(app).Note.objects.filter(title="x").exists()
    filed = send(client, "POST", "/v1/notes/filed", {**body, "tags": [bobs]}, who="bob")
    assert (filed.status_code, filed.json()["tags"]) == (200, [bobs]), filed.content


def test_check_owner_names_the_field(app: Any, db: Any) -> None:
    from types import SimpleNamespace

    from toolkit_batteries.api_runtime import crud
    from toolkit_batteries.auth.base import Claims
    from toolkit_batteries.http import ApiError

    models = models_of(app)
    reads = {"Tag": crud.Read("tag.read", owner_field="owner")}
    request = SimpleNamespace(auth=_claims(Claims, "bob"))
    crud.check_owner(models.Tag, {"owner": "bob"}, request, reads=reads)  # the caller's own
    with pytest.raises(ApiError) as refused:
        crud.check_owner(models.Tag, {"owner": "ann"}, request, reads=reads)
    error = refused.value
    assert (error.status, error.code) == (400, "invalid_argument")
    assert "owner" in error.message
    assert error.fields == {"owner": ["must be the caller's own id"]}
    # Without reads given, the app's generated READS is used (found from the model).
    with pytest.raises(ApiError):
        crud.check_owner(models.Tag, {"owner": "ann"}, request)


def _claims(cls: Any, subject: str) -> Any:
    token = services.auth().issue(subject, roles=(), ttl=timedelta(minutes=5)).token
    claims = services.auth().verify(token)
    assert isinstance(claims, cls)
    return claims
