"""``toolkit explain`` says what a relation id (and the owner field) of an rpc must satisfy.

Issue 30 item 9: a ``belongs_to`` column and a ``many_to_many`` id list must name rows
that exist and that the caller may read (the target's ``GET`` check), else 400 as for an
unknown id; the CRUD default checks it, a hand-written handler calls
``crud.check_references``; the owner field must be the caller's own id.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.schemas import TEAM_TAG_NOTE

SCHEMA = (
    TEAM_TAG_NOTE
    + """\

service NoteService {
  rpc GetTeam(id: uuid) -> Team {
    http: GET "/v1/teams/{id}"
    permission: check("team.read", resource: Team, owner_field: owner)
  }
  rpc GetNote(id: uuid) -> Note {
    http: GET "/v1/notes/{id}"
    permission: check("note.read", resource: Note, owner_field: owner)
  }
  rpc CreateNote(owner: string, team_id: uuid, tags: [uuid]) -> Note {
    http: POST "/v1/notes"
    auth: required
  }
  rpc MoveNote(id: uuid, team_id: uuid, reason: string) -> Note {
    http: POST "/v1/notes/{id}/move"
    auth: required
  }
}
"""
)


def _schema(tmp_path: Path) -> Path:
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "notes.toolkit").write_text(SCHEMA)
    return tmp_path


def test_a_crud_create_says_each_id_must_be_readable_and_the_owner_the_callers(
    toolkit, tmp_path: Path
) -> None:
    ran = toolkit("explain", "NoteService.CreateNote", cwd=_schema(tmp_path))
    assert ran.returncode == 0, ran
    lines = ran.stdout.splitlines()
    at = lines.index("  ids:")
    assert lines[at + 1 : at + 4] == [
        '    team_id: an existing Team the caller may read (check "team.read", owner in owner);'
        " else 400, as an unknown id (the CRUD default checks it)",
        "    tags:    ids of existing Tag rows; else 400, as an unknown id"
        " (the CRUD default checks it); answers list only readable ids",
        "    owner:   the caller's own id (Note's read check compares it);"
        " else 400 (the CRUD default checks it)",
    ]


def test_a_handler_rpc_names_the_public_check_and_json_has_the_facts(
    toolkit, tmp_path: Path
) -> None:
    ran = toolkit("--json", "explain", "NoteService.MoveNote", cwd=_schema(tmp_path))
    assert ran.returncode == 0, ran
    assert ran.json["data"]["runs"]["kind"] == "handler"
    assert ran.json["data"]["ids"] == [
        {
            "param": "team_id",
            "kind": "belongs_to",
            "target": "Team",
            "read": {"action": "team.read", "owner_field": "owner"},
            "checked_by": "handler",
        }
    ]
    text = toolkit("explain", "NoteService.MoveNote", cwd=tmp_path)
    assert "(handler: crud.check_references)" in text.stdout


def test_a_get_names_no_ids(toolkit, tmp_path: Path) -> None:
    ran = toolkit("--json", "explain", "NoteService.GetNote", cwd=_schema(tmp_path))
    assert ran.returncode == 0, ran
    assert ran.json["data"]["ids"] == []
    assert "  ids:" not in toolkit("explain", "NoteService.GetNote", cwd=tmp_path).stdout
