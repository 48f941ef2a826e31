"""The rendered template describes itself truthfully: ``GET /`` and the api app.

``GET /`` lists the routes the project really serves (read from Django's resolver), so a
compiled schema's routes appear with their methods and nothing of the sample is left
when the sample's schema is gone; the ``api`` app has an ``AppConfig`` whose ``ready()``
runs (the place for ``ModelIndex(...).connect()``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import base_env, render_project, run_toolkit

SCHEMA = """\
entity Gadget {
  id: uuid @primary
  name: string
}

service GadgetService {
  rpc CreateGadget(name: string) -> Gadget {
    http: POST "/v2/gadgets"
    auth: none
  }

  rpc GetGadget(id: uuid) -> Gadget {
    http: GET "/v2/gadgets/{id}"
    auth: none
  }
}
"""

PROBE = """
import json
from django.apps import apps
from django.test import Client
answer = Client(SERVER_NAME="localhost").get("/", secure=True)
print(json.dumps({"status": answer.status_code, "body": json.loads(answer.content),
                  "api": type(apps.get_app_config("api")).__name__}))
"""


def test_index_lists_the_routes_the_project_serves(tmp_path: Path) -> None:
    root = render_project(tmp_path / "demo")
    (root / "schema" / "app.toolkit").write_text(SCHEMA)  # the sample's notes are gone
    env = base_env(TOOLKIT_ENV="dev")
    compiled = run_toolkit("compile", cwd=root, env=env)
    assert compiled.returncode == 0, compiled
    shell = [sys.executable, "manage.py", "shell", "-c", PROBE]
    done = subprocess.run(shell, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == 200
    assert report["api"] == "ApiConfig"
    routes = report["body"]["routes"]
    assert "POST /v2/gadgets" in routes, routes
    assert any(r.startswith("GET /v2/gadgets/") for r in routes), routes
    assert "POST /api/login" in routes or "/api/login" in routes
    assert not any("/v1/notes" in r for r in routes), routes  # nothing of the sample


def test_new_md_lists_the_batteries_new_really_installs(tmp_path: Path) -> None:
    created = run_toolkit(
        "--json", "new", "shop", "--dir", str(tmp_path / "shop"), "--batteries", "cache/redis"
    )
    assert created.returncode == 0, created
    installed = ", ".join(created.json["data"]["batteries"])
    docs = (Path(__file__).resolve().parents[1] / "docs" / "cli" / "new.md").read_text()
    assert f"in /home/ann/shop with batteries: {installed}\n" in docs, installed
