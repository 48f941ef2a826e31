"""``toolkit generate entity --crud``: the entity, its five CRUD rpcs, served with no handler code.

A rendered project gets ``Task`` with ``--crud``; ``compile_schema`` and ``migrate`` run
in the project, and a script inside it (``manage.py shell``) drives the five routes with
a bearer token through Django's test client.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.subprocesses import run_manage

from .conftest import base_env, run_toolkit, tree


def _manage(proj: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_manage(proj, *args, env=base_env(TOOLKIT_ENV="dev"), timeout=300)


DRIVE = """
import json
from datetime import timedelta
from django.test import Client
from toolkit_batteries import services

token = services.auth().issue("u-1", ttl=timedelta(minutes=5)).token
h = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
c = Client(HTTP_HOST="localhost")
out = {}
made = c.post("/v1/tasks", json.dumps({"title": "write", "done": False}),
              content_type="application/json", **h)
out["create"] = made.status_code
task = made.json()
out["get"] = c.get(f"/v1/tasks/{task['id']}", **h).json() == task
out["list"] = [t["id"] for t in c.get("/v1/tasks", **h).json()["items"]] == [task["id"]]
patched = c.patch(f"/v1/tasks/{task['id']}", json.dumps({"done": True}),
                  content_type="application/json", **h).json()
out["update"] = (patched["done"], patched["title"])
out["delete"] = c.delete(f"/v1/tasks/{task['id']}", **h).status_code
out["gone"] = c.get(f"/v1/tasks/{task['id']}", **h).status_code
out["anonymous"] = c.get("/v1/tasks").status_code
print("RESULT " + json.dumps(out))
"""


def test_crud_entity_is_served_without_handler_code(proj: Path) -> None:
    ran = run_toolkit(
        "--json",
        "generate",
        "entity",
        "app",
        "Task",
        "--field",
        "title:string",
        "--field",
        "done:bool",
        "--crud",
        cwd=proj,
    )
    assert ran.returncode == 0, ran
    assert ran.json["data"]["crud"] is True
    schema = (proj / "schema" / "app.toolkit").read_text()
    assert "service TaskService {" in schema
    for rpc in ("CreateTask", "GetTask", "ListTasks", "UpdateTask", "DeleteTask"):
        assert f"rpc {rpc}(" in schema
    compiled = _manage(proj, "compile_schema")
    assert compiled.returncode == 0, compiled.stderr
    handlers = (proj / "api" / "handlers.py").read_text()
    assert "class TaskService:" in handlers and "def create_task" not in handlers
    migrated = _manage(proj, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    driven = _manage(proj, "shell", "-c", DRIVE)
    assert driven.returncode == 0, driven.stderr
    line = next(x for x in driven.stdout.splitlines() if x.startswith("RESULT "))
    assert json.loads(line[len("RESULT ") :]) == {
        "create": 200,
        "get": True,
        "list": True,
        "update": [True, "write"],
        "delete": 200,
        "gone": 404,
        "anonymous": 401,
    }


def test_crud_service_that_would_clash_is_not_written(proj: Path) -> None:
    path = proj / "schema" / "app.toolkit"
    path.write_text(
        path.read_text()
        + '\nservice TaskService {\n  rpc Ping() -> Note { http: GET "/v1/ping"; auth: none }\n}\n'
    )
    before = tree(proj)
    ran = run_toolkit(
        "generate", "entity", "app", "Task", "--field", "title:string", "--crud", cwd=proj
    )
    assert ran.returncode == 3, ran
    assert "TaskService" in ran.stderr
    assert tree(proj) == before
