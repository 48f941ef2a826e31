"""List types (``tags: [string]``, ``scores: [int]?``) through a served project.

A rendered project's schema declares list fields; ``toolkit compile`` turns them into a
``ListField`` (a PostgreSQL array, a JSON array on SQLite), its migration, a DRF
``ListField`` that validates every element, and ``type: array`` in OpenAPI. The project
is served on SQLite and on PostgreSQL (by ``TOOLKIT_DATABASE_URL``); real requests store
and read lists, and an element that breaks its ``@validate`` rule is a 400 naming the
field.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import base_env, render_project, run_toolkit, start_serve
from tests.cli.test_end_to_end import _call, _wait_until_up
from tests.ports import free_port
from tests.support.databases import empty_postgres_database

SCHEMA = """\
entity Memo {
  id: uuid @primary
  title: string
  tags: [string] @validate(min_len: 1, max_len: 5)
  scores: [int]?
}

service MemoService {
  rpc CreateMemo(
    title: string,
    tags: [string] @validate(min_len: 1, max_len: 5),
    scores: [int]?,
  ) -> Memo {
    http: POST "/v1/memos"
    auth: none
  }

  rpc GetMemo(id: uuid) -> Memo {
    http: GET "/v1/memos/{id}"
    auth: none
  }
}
"""


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Yield "" (the template's SQLite file) or the URL of a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield ""
        return

    server = request.getfixturevalue("postgres_server_dsn")
    with empty_postgres_database(server, "toolkit_lists") as url:
        yield url


# Render, compile, migrate and a served gunicorn: minutes on a loaded machine.
@pytest.mark.timeout(360)
@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_list_fields_are_stored_served_and_validated_element_wise(
    tmp_path: Path, database_url: str
) -> None:
    root = render_project(tmp_path / "demo")
    (root / "schema" / "memos.toolkit").write_text(SCHEMA)
    env = base_env(
        AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48),
        WEB_CONCURRENCY="1",
        DJANGO_SECURE_SSL_REDIRECT="0",
    )
    if database_url:
        env["TOOLKIT_DATABASE_URL"] = database_url
    compiled = run_toolkit("compile", cwd=root, env=env)
    assert compiled.returncode == 0, compiled
    models = (root / "api" / "generated" / "models.py").read_text()
    assert 'tags = modelfields.ListField(element="string", default=list)' in models
    migrated = run_toolkit("db", "migrate", cwd=root, env=env)
    assert migrated.returncode == 0, migrated
    makemigrations = [sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"]
    clean = subprocess.run(makemigrations, cwd=root, env=env, capture_output=True, timeout=120)
    assert clean.returncode == 0, clean.stdout  # the compiled migration matches the models

    openapi = run_toolkit("compile", "--backend", "openapi", "--out", str(tmp_path / "o"), cwd=root)
    assert openapi.returncode == 0, openapi
    document = json.loads(next((tmp_path / "o").rglob("openapi.json")).read_text())
    memo = next(v for k, v in document["components"]["schemas"].items() if k.endswith("Memo"))
    assert memo["properties"]["tags"] == {
        "type": "array",
        # Every string states that NUL is refused (the server refuses it).
        "items": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[^\\u0000]*$"},
    }
    assert memo["properties"]["scores"]["type"] == "array"

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(root, env, port, stdout=subprocess.DEVNULL)
    try:
        _wait_until_up(base, server, limit=120)  # a loaded machine starts slowly
        body = {"title": "t", "tags": ["a", "bb"], "scores": [3, 40]}
        status, created, _ = _call(base, "POST", "/v1/memos", body)
        assert status == 200, created
        assert (created["tags"], created["scores"]) == (["a", "bb"], [3, 40])
        status, got, _ = _call(base, "GET", f"/v1/memos/{created['id']}")
        assert (status, got) == (200, created)
        status, bare, _ = _call(base, "POST", "/v1/memos", {"title": "u", "tags": []})
        assert (status, bare["tags"], bare["scores"]) == (200, [], None), bare

        for bad, field in (
            ({"title": "t", "tags": ["a", "toolong"]}, "tags.1"),  # an element over max_len
            ({"title": "t", "tags": [""]}, "tags.0"),  # an element under min_len
            ({"title": "t", "tags": "a"}, "tags"),  # not a list
            ({"title": "t", "tags": ["a"], "scores": ["x"]}, "scores.0"),  # not an int
        ):
            status, error, _ = _call(base, "POST", "/v1/memos", bad)
            assert status == 400, (bad, error)
            assert error["error"]["code"] == "invalid_argument", error
            assert list(error["error"]["fields"]) == [field], error
    finally:
        server.terminate()
        try:
            server.communicate(timeout=90)
        except subprocess.TimeoutExpired:  # cleanup only: a loaded machine stops slowly
            server.kill()
            server.communicate()

    if database_url:
        probe = (
            "from django.db import connection\n"
            "with connection.cursor() as c:\n"
            '    c.execute("SELECT data_type FROM information_schema.columns WHERE "\n'
            "              \"table_name = 'memos' AND column_name = 'tags'\")\n"
            "    print(c.fetchone()[0])\n"
        )
        shell = [sys.executable, "manage.py", "shell", "-c", probe]
        done = subprocess.run(shell, cwd=root, env=env, capture_output=True, text=True, timeout=60)
        assert done.stdout.strip().splitlines()[-1] == "ARRAY", done


def test_list_types_parse_format_and_report_misuse(tmp_path: Path) -> None:
    good = tmp_path / "good.toolkit"
    good.write_text("entity Memo {\n  id: uuid @primary\n  tags: [string]\n  scores: [int]?\n}\n")
    assert run_toolkit("check", str(good)).returncode == 0
    formatted = run_toolkit("fmt", "-w", str(good))
    assert formatted.returncode == 0, formatted
    assert "  tags: [string]\n  scores: [int64]?\n" in good.read_text()
    assert run_toolkit("fmt", "-l", str(good)).returncode == 0  # a fixed point

    bad = tmp_path / "bad.toolkit"
    bad.write_text(
        "entity Memo {\n"
        "  id: uuid @primary\n"
        "  blobs: [bytes]\n"
        "  keys: [string] @unique\n"
        "}\n"
        "service MemoService {\n"
        "  rpc FindMemos(tags: [string]) -> Memo {\n"
        '    http: GET "/v1/memos"\n'
        "    auth: none\n"
        "  }\n"
        "}\n"
    )
    checked = run_toolkit("check", str(bad))
    assert checked.returncode == 3, checked
    said = checked.stdout + checked.stderr
    assert "bad.toolkit:3:10: [resolve] a list holds scalars" in said, said
    assert "[bytes] is not one" in said
    assert "bad.toolkit:4:3: [resolve] list field Memo.keys cannot be @unique" in said, said
    assert "GET rpc MemoService.FindMemos has no request body: list parameter tags" in said
