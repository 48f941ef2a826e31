"""Ids in a request must name rows the caller may read: the team-notes product, served.

The walkthrough of issue 30 as a test: teams, tags and notes, each row owned by the account
that made it, team and tag reads owner-only (``permission/rbac``), a note ``belongs_to`` a team
and has ``many_to_many`` tags, every rpc a CRUD default. Over real HTTP with two accounts
from the template's login: a ``team_id`` or a tag id of the other account's row is the
same ``400`` naming the field as an id that names no row (so ids reveal nothing), on create
and on update, and the refused update changes nothing; a note read by the other account
lists none of the tag ids it may not read; a create filing a row under the other
account's id is a ``400`` naming the owner field.
"""

from __future__ import annotations

import secrets
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.cli.conftest import base_env, render_project, run_toolkit, start_serve
from tests.cli.test_end_to_end import _call, _wait_until_up
from tests.cli.test_end_to_end_schema import _register_and_login
from tests.ports import free_port

SCHEMA = """\
entity Team {
  id: uuid @primary
  name: string
  owner: string
  has_many notes: TeamNote @foreign_key(team_id)
}

entity Tag {
  id: uuid @primary
  label: string
  owner: string
}

entity TeamNote {
  id: uuid @primary
  body: string
  owner: string
  team_id: uuid
  belongs_to team: Team @foreign_key(team_id)
  many_to_many tags: Tag { join_table: team_note_tags }
}

service TeamService {
  rpc CreateTeam(name: string, owner: string) -> Team {
    http: POST "/v1/teams"
    auth: required
  }
  rpc GetTeam(id: uuid) -> Team {
    http: GET "/v1/teams/{id}"
    permission: check("team.read", resource: Team, owner_field: owner)
  }
  rpc CreateTag(label: string, owner: string) -> Tag {
    http: POST "/v1/tags"
    auth: required
  }
  rpc GetTag(id: uuid) -> Tag {
    http: GET "/v1/tags/{id}"
    permission: check("tag.read", resource: Tag, owner_field: owner)
  }
  rpc CreateTeamNote(body: string, owner: string, team_id: uuid, tags: [uuid]) -> TeamNote {
    http: POST "/v1/team-notes"
    auth: required
  }
  rpc GetTeamNote(id: uuid) -> TeamNote {
    http: GET "/v1/team-notes/{id}"
    permission: check("note.read", resource: TeamNote, owner_field: owner)
  }
  rpc UpdateTeamNote(id: uuid, body: string?, tags: [uuid]?, team_id: uuid?) -> TeamNote {
    http: PATCH "/v1/team-notes/{id}"
    permission: check("note.edit", resource: TeamNote, owner_field: owner)
  }
}
"""

#: Everyone reads any note but edits only their own; teams and tags are the owner's alone.
RULES = """"permission": {
        "adapter": "rbac",
        "options": {
            "rules": [
                {"Role": "*", "Action": "team.read", "OwnedOnly": True},
                {"Role": "*", "Action": "tag.read", "OwnedOnly": True},
                {"Role": "*", "Action": "note.read"},
                {"Role": "*", "Action": "note.edit", "OwnedOnly": True},
            ],
        },
    },"""


# Render, compile, migrate and a served gunicorn: minutes on a loaded machine.
@pytest.mark.timeout(420)
def test_ids_of_rows_the_caller_may_not_read_are_refused_like_unknown_ids(tmp_path: Path) -> None:
    root = render_project(tmp_path / "demo")
    (root / "schema" / "teams.toolkit").write_text(SCHEMA)
    env = base_env(
        AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48),
        WEB_CONCURRENCY="1",
        DJANGO_SECURE_SSL_REDIRECT="0",
    )
    added = run_toolkit("add", "permission/rbac", cwd=root, env=env)
    assert added.returncode == 0, added
    settings = root / "demo" / "settings.py"
    text = settings.read_text()
    assert text.count('"permission": {"adapter": "rbac"},') == 1, text
    settings.write_text(text.replace('"permission": {"adapter": "rbac"},', RULES))
    compiled = run_toolkit("compile", cwd=root, env=env)
    assert compiled.returncode == 0, compiled
    handlers = (root / "api" / "handlers.py").read_text()
    assert "def " not in handlers[handlers.index("class TeamService:") :]  # all CRUD defaults
    migrated = run_toolkit("db", "migrate", cwd=root, env=env)
    assert migrated.returncode == 0, migrated

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(root, env, port, stdout=subprocess.DEVNULL)
    try:
        _wait_until_up(base, server, limit=120)
        ann, ann_id = _register_and_login(base, "ann@example.com")
        bob, bob_id = _register_and_login(base, "bob@example.com")

        def made(path: str, body: dict[str, object], token: str) -> dict[str, object]:
            status, row, _ = _call(base, "POST", path, body, token)
            assert status == 200, row
            return row

        team = made("/v1/teams", {"name": "core", "owner": ann_id}, ann)
        tag = made("/v1/tags", {"label": "urgent", "owner": ann_id}, ann)
        note = made(
            "/v1/team-notes",
            {"body": "hi", "owner": ann_id, "team_id": team["id"], "tags": [tag["id"]]},
            ann,
        )
        assert (note["team_id"], note["tags"]) == (team["id"], [tag["id"]])
        bobs_team = made("/v1/teams", {"name": "side", "owner": bob_id}, bob)
        bobs_tag = made("/v1/tags", {"label": "later", "owner": bob_id}, bob)

        # Bob names Ann's team and tag: the answer is the one an id naming no row gets.
        unknown_team, unknown_tag = str(uuid.uuid4()), str(uuid.uuid4())
        answers = []
        for team_id, tag_id in ((team["id"], tag["id"]), (unknown_team, unknown_tag)):
            body = {"body": "x", "owner": bob_id, "team_id": team_id, "tags": [tag_id]}
            status, error, _ = _call(base, "POST", "/v1/team-notes", body, bob)
            answers.append((status, error))
        assert answers[0] == answers[1], answers
        status, error = answers[0]
        assert status == 400, error
        assert error["error"]["fields"] == {
            "team_id": ["no such team"],
            "tags": ["every id must name an existing tag"],
        }
        # One readable id beside an unreadable one is still refused.
        body = {"body": "x", "owner": bob_id, "team_id": bobs_team["id"]}
        status, error, _ = _call(
            base, "POST", "/v1/team-notes", {**body, "tags": [bobs_tag["id"], tag["id"]]}, bob
        )
        assert (status, list(error["error"]["fields"])) == (400, ["tags"]), error
        status, own, _ = _call(
            base, "POST", "/v1/team-notes", {**body, "tags": [bobs_tag["id"]]}, bob
        )
        assert (status, own["tags"]) == (200, [bobs_tag["id"]]), own

        # On update too, and the refused update changes nothing.
        path = f"/v1/team-notes/{own['id']}"
        status, error, _ = _call(base, "PATCH", path, {"tags": [tag["id"]]}, bob)
        assert (status, list(error["error"]["fields"])) == (400, ["tags"]), error
        status, error, _ = _call(base, "PATCH", path, {"team_id": team["id"]}, bob)
        assert (status, error["error"]["fields"]) == (400, {"team_id": ["no such team"]}), error
        status, got, _ = _call(base, "GET", path, token=bob)
        assert (status, got["tags"], got["team_id"]) == (200, [bobs_tag["id"]], bobs_team["id"])

        # Bob may read Ann's note, but not her tag: the note he reads lists no tag id.
        status, seen, _ = _call(base, "GET", f"/v1/team-notes/{note['id']}", token=bob)
        assert (status, seen["tags"]) == (200, []), seen
        status, seen, _ = _call(base, "GET", f"/v1/team-notes/{note['id']}", token=ann)
        assert (status, seen["tags"]) == (200, [tag["id"]]), seen

        # Ann may use her own rows, and Bob may not file a row under Ann's id.
        status, changed, _ = _call(base, "PATCH", f"/v1/team-notes/{note['id']}", {"tags": []}, ann)
        assert (status, changed["tags"]) == (200, []), changed
        status, error, _ = _call(base, "POST", "/v1/teams", {"name": "x", "owner": ann_id}, bob)
        assert (status, list(error["error"]["fields"])) == (400, ["owner"]), error
        assert error["error"]["message"] == "invalid parameter owner", error
    finally:
        server.terminate()
        try:
            server.communicate(timeout=90)
        except subprocess.TimeoutExpired:  # cleanup only: a loaded machine stops slowly
            server.kill()
            server.communicate()
