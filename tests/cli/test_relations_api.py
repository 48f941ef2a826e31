"""Relations in the API of a served project: ``<name>_id`` and many-to-many id lists.

A rendered project's schema has teams, tags (many-to-many) and posts that belong to a
team. Its CRUD rpcs take ``team_id`` and ``tags: [uuid]``; over real HTTP the ids are
set on create and update, returned on reads, and an id that names no row is a 400
naming the parameter. A ``ModelIndex`` of teams (the search battery, added as a user
adds it) indexes a team again when its tags change.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.cli.conftest import base_env, render_project, run_toolkit, start_serve
from tests.cli.test_end_to_end import _call, _wait_until_up
from tests.ports import free_port

SCHEMA = """\
entity Team {
  id: uuid @primary
  name: string
  has_many posts: Post @foreign_key(team_id)
  many_to_many tags: Tag { join_table: team_tags }
}

entity Tag {
  id: uuid @primary
  label: string
  many_to_many teams: Team { join_table: team_tags }
}

entity Post {
  id: uuid @primary
  title: string
  team_id: uuid
  belongs_to team: Team @foreign_key(team_id)
}

service TeamService {
  rpc CreateTag(label: string) -> Tag {
    http: POST "/v1/tags"
    auth: none
  }

  rpc CreateTeam(name: string, tags: [uuid]) -> Team {
    http: POST "/v1/teams"
    auth: none
  }

  rpc UpdateTeam(id: uuid, name: string?, tags: [uuid]?) -> Team {
    http: PATCH "/v1/teams/{id}"
    auth: none
  }

  rpc GetTeam(id: uuid) -> Team {
    http: GET "/v1/teams/{id}"
    auth: none
  }

  rpc CreatePost(title: string, team_id: uuid) -> Post {
    http: POST "/v1/posts"
    auth: none
  }
}
"""

#: Index teams with their tags' labels; change the tags; search by a label.
INDEX = """
import json
from api.models import Tag, Team
from toolkit_batteries import services
from toolkit_batteries.search.sync import ModelIndex

teams = ModelIndex(
    Team, index="teams",
    fields=lambda t: {"name": t.name, "tags": " ".join(x.label for x in t.tags.all())},
).connect()
team = Team.objects.create(name="blue")
found = lambda word: services.search().query("teams", word).doc_ids
before = found("urgent")
team.tags.add(Tag.objects.create(label="urgent"))
after_add = found("urgent")
team.tags.clear()
print(json.dumps({"before": before, "after_add": after_add, "after_clear": found("urgent"),
                  "id": str(team.pk)}))
"""


# Render, compile, migrate and a served gunicorn: minutes on a loaded machine.
@pytest.mark.timeout(360)
def test_belongs_to_and_many_to_many_travel_as_ids_and_are_validated(tmp_path: Path) -> None:
    root = render_project(tmp_path / "demo")
    (root / "schema" / "teams.toolkit").write_text(SCHEMA)
    env = base_env(
        AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48),
        WEB_CONCURRENCY="1",
        DJANGO_SECURE_SSL_REDIRECT="0",
    )
    added = run_toolkit("add", "search/db", cwd=root, env=env)
    assert added.returncode == 0, added
    compiled = run_toolkit("compile", cwd=root, env=env)
    assert compiled.returncode == 0, compiled
    handlers = (root / "api" / "handlers.py").read_text()
    team_class = handlers[handlers.index("class TeamService:") :]
    assert "def " not in team_class  # every rpc is plain CRUD: the ORM defaults serve it
    migrated = run_toolkit("db", "migrate", cwd=root, env=env)
    assert migrated.returncode == 0, migrated

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(root, env, port, stdout=subprocess.DEVNULL)
    try:
        _wait_until_up(base, server, limit=120)
        tags = []
        for label in ("red", "green"):
            status, tag, _ = _call(base, "POST", "/v1/tags", {"label": label})
            assert status == 200, tag
            tags.append(tag["id"])
        status, team, _ = _call(base, "POST", "/v1/teams", {"name": "a", "tags": tags})
        assert status == 200, team
        assert team["tags"] == sorted(tags)
        status, got, _ = _call(base, "GET", f"/v1/teams/{team['id']}")
        assert (status, got["tags"]) == (200, sorted(tags))

        status, changed, _ = _call(base, "PATCH", f"/v1/teams/{team['id']}", {"tags": [tags[0]]})
        assert (status, changed["tags"], changed["name"]) == (200, [tags[0]], "a"), changed
        status, renamed, _ = _call(base, "PATCH", f"/v1/teams/{team['id']}", {"name": "b"})
        assert (status, renamed["tags"]) == (200, [tags[0]])  # absent: unchanged

        unknown = str(uuid.uuid4())
        status, error, _ = _call(base, "POST", "/v1/teams", {"name": "c", "tags": [unknown]})
        assert status == 400, error
        assert list(error["error"]["fields"]) == ["tags"]
        assert unknown not in json.dumps(error)  # the message never echoes the ids
        status, error, _ = _call(base, "PATCH", f"/v1/teams/{team['id']}", {"tags": [unknown]})
        assert (status, list(error["error"]["fields"])) == (400, ["tags"])
        status, got, _ = _call(base, "GET", f"/v1/teams/{team['id']}")
        assert got["tags"] == [tags[0]]  # the refused update changed nothing

        status, note, _ = _call(base, "POST", "/v1/posts", {"title": "n", "team_id": team["id"]})
        assert (status, note["team_id"]) == (200, team["id"]), note
        status, error, _ = _call(base, "POST", "/v1/posts", {"title": "n", "team_id": unknown})
        assert status == 400, error
        assert error["error"]["fields"] == {"team_id": ["no such team"]}
    finally:
        server.terminate()
        try:
            server.communicate(timeout=90)
        except subprocess.TimeoutExpired:  # cleanup only: a loaded machine stops slowly
            server.kill()
            server.communicate()

    shell = [sys.executable, "manage.py", "shell", "-c", INDEX]
    done = subprocess.run(shell, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["before"] == [] and report["after_add"] == [report["id"]], report
    assert report["after_clear"] == [], report
