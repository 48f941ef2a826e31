"""``toolkit routes`` inside a project lists every URL Django serves, marked by origin.

Before, it listed only the schema's routes: ``/api/login`` (hand-written), ``/readyz``
(a battery's view) and the admin were missing.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import base_env, render_project, run_toolkit


def test_routes_in_a_project_list_every_url_by_origin(tmp_path: Path) -> None:
    project = render_project(tmp_path / "p")
    env = base_env(TOOLKIT_ENV="dev")
    ran = run_toolkit("routes", cwd=project, env=env)
    assert ran.returncode == 0, ran
    lines = ran.stdout.splitlines()

    def line_of(path: str) -> str:
        found = [line for line in lines if line.split()[1:2] == [path]]
        assert len(found) == 1, (path, lines)
        return found[0]

    notes = [line for line in lines if line.startswith("GET /v1/notes ")]
    assert len(notes) == 1 and notes[0].endswith("[schema]  auth: required"), notes
    assert "-> accounts.views.login" in line_of("/api/login")
    assert line_of("/api/login").rstrip().endswith("[project]")
    assert line_of("/readyz").rstrip().endswith("[toolkit]")
    assert line_of("/admin/...").rstrip().endswith("[django]")
    assert not any(line.split()[1].startswith("/admin/") and "..." not in line for line in lines)

    rows = run_toolkit("--json", "routes", cwd=project, env=env).json["data"]
    by_path = {(r["method"], r["path"]): r for r in rows}
    assert by_path["*", "/api/login"]["origin"] == "project"
    assert by_path["*", "/api/login"]["view"] == "accounts.views.login"
    assert by_path["*", "/healthz"]["origin"] == "project"
    schema_rows = [r for r in rows if r["origin"] == "schema"]
    assert schema_rows and all("rpc" in r for r in schema_rows)


def test_routes_with_paths_stay_schema_only(tmp_path: Path) -> None:
    project = render_project(tmp_path / "p")
    ran = run_toolkit("--json", "routes", "schema", cwd=project, env=base_env(TOOLKIT_ENV="dev"))
    assert ran.returncode == 0, ran
    assert all("origin" not in row for row in ran.json["data"])
