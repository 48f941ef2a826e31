"""The whole path a new user takes, through the installed ``toolkit`` script only.

``toolkit new`` -> ``toolkit compile`` -> ``toolkit db migrate`` -> ``toolkit serve`` in the
background -> register, log in, create and list notes over real HTTP (the generated
endpoints) -> SIGTERM ends the server cleanly. Embedded defaults only: SQLite file,
memory rate limits, standard logging.
"""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.cli.conftest import base_env, run_toolkit, start_serve
from tests.ports import free_port


def _call(
    base: str, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any, dict[str, str]]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), dict(error.headers)


def _wait_until_up(base: str, server: subprocess.Popen[str], limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"server exited early: {server.communicate()}")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("server did not answer /healthz in time")


def test_new_compile_migrate_serve_register_login_call_and_stop(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    env = base_env(
        AUTH__DEFAULT__JWT_SECRET=secrets.token_urlsafe(48),
        WEB_CONCURRENCY="1",
        # Production settings, served over plain HTTP on the loopback interface.
        DJANGO_SECURE_SSL_REDIRECT="0",
    )

    created = run_toolkit("new", "shop", "--dir", str(project), "--json", env=env)
    assert created.returncode == 0, created
    assert created.json["data"]["package"] == "shop"
    assert (project / "manage.py").is_file() and (project / "schema" / "app.toolkit").is_file()

    compiled = run_toolkit("compile", cwd=project, env=env)
    assert compiled.returncode == 0, compiled
    assert (project / "api" / "generated").is_dir()
    assert (project / "api" / "migrations" / "0001_initial.py").is_file()

    migrated = run_toolkit("db", "migrate", "--json", cwd=project, env=env)
    assert migrated.returncode == 0, migrated
    assert migrated.json["ok"] is True
    assert (project / "db.sqlite3").is_file()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(project, env, port)
    try:
        _wait_until_up(base, server)
        account = {"email": "ann@example.com", "password": "correct horse", "name": "Ann"}
        status, body, _ = _call(base, "POST", "/api/register", account)
        assert status == 201, body
        status, body, _ = _call(
            base, "POST", "/api/login", {"email": account["email"], "password": "correct horse"}
        )
        assert status == 200, body
        token = body["token"]

        status, note, _ = _call(base, "POST", "/v1/notes", {"title": "from the e2e test"}, token)
        assert status == 200, note
        assert note["title"] == "from the e2e test" and note["done"] is False
        status, listed, _ = _call(base, "GET", "/v1/notes", token=token)
        assert status == 200
        assert [item["id"] for item in listed["items"]] == [note["id"]]
        status, got, _ = _call(base, "GET", f"/v1/notes/{note['id']}", token=token)
        assert (status, got["id"]) == (200, note["id"])
        status, body, headers = _call(base, "GET", "/v1/notes")
        assert status == 401 and headers.get("WWW-Authenticate", "").startswith("Bearer")
        status, body, _ = _call(base, "POST", "/v1/notes", {"title": ""}, token)
        assert status == 400 and "title" in json.dumps(body)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            out, err = server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            out, err = server.communicate()
            raise AssertionError(f"server ignored SIGTERM: {err[-2000:]}") from None
    assert server.returncode == 0, err[-2000:]
    assert token not in out + err
    assert env["AUTH__DEFAULT__JWT_SECRET"] not in out + err
