"""The generated CRUD defaults carry each entity's read check (``READS``).

A create or update naming a row by id (a ``belongs_to`` column, a ``many_to_many`` list)
must name one the caller may read: the ``views`` backend hands ``crud.create`` and
``crud.update`` the ``permission: check(...)`` of each entity's ``GET``-by-id rpc. The
served behaviour is tested in ``tests/cli/test_relations_readable.py``; here, which checks
the generated module holds, and that the module still imports and runs (the ``READS``
mapping is executed as Python against the real runtime classes).
"""

from __future__ import annotations

from tests.support.schemas import TEAM_TAG_NOTE
from toolkit_batteries.api_runtime import crud
from toolkit_codegen.backends.views import render_views
from toolkit_codegen.compiler import load_sources

BASE = (
    "\n"
    + TEAM_TAG_NOTE
    + """\

service S {
  rpc CreateNote(owner: string, team_id: uuid, tags: [uuid]) -> Note {
    http: POST "/v1/notes"
    auth: required
  }
  rpc UpdateNote(id: uuid, tags: [uuid]?) -> Note {
    http: PATCH "/v1/notes/{id}"
    auth: required
  }
"""
)


def _views(rpcs: str) -> str:
    loaded = load_sources({"app.toolkit": BASE + rpcs + "}\n"})
    assert loaded.ok, [str(d) for d in loaded.diagnostics]
    return render_views(loaded.schema)


def _reads(text: str) -> dict[str, crud.Read]:
    """Execute the generated ``READS = {...}`` statement and return its value."""
    start = text.index("READS = {")
    end = text.index("}\n", start) + 1
    scope: dict[str, object] = {"crud": crud}
    exec(text[start:end], scope)  # the generated code, run as the app would run it
    return scope["READS"]  # type: ignore[return-value]


def test_each_read_checked_entity_is_in_reads_and_reaches_create_and_update() -> None:
    text = _views("""
  rpc GetTeam(id: uuid) -> Team {
    http: GET "/v1/teams/{id}"
    permission: check("team.read", resource: Team, owner_field: owner)
  }
  rpc GetTag(id: uuid) -> Tag {
    http: GET "/v1/tags/{id}"
    permission: check("tag.read", resource: Tag)
  }
""")
    assert _reads(text) == {
        "Team": crud.Read("team.read", owner_field="owner"),
        "Tag": crud.Read("tag.read"),
    }
    assert "crud.create(models.Note, reads=READS)" in text
    assert 'crud.update(models.Note, "id", partial=True, reads=READS)' in text


def test_without_read_checks_the_defaults_take_no_reads() -> None:
    text = _views("""
  rpc GetTeam(id: uuid) -> Team {
    http: GET "/v1/teams/{id}"
    auth: required
  }
""")
    assert "READS" not in text
    assert "crud.create(models.Note)" in text
