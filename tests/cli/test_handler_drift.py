"""Drift between the schema and the user's code is caught before anything runs.

A project compiles a schema with a CRUD update (served by its ORM default), a hand-written
rpc and a job; the user writes the handler and the job. Then the schema moves on: the
update's parameter is renamed to one that is not a field (the CRUD default stops
applying: the route would answer 501), the hand-written rpc's parameter is renamed (the
handler would raise TypeError) and the job's parameter too (the worker would). Each is
reported with file:line and the fix by ``toolkit compile`` and by ``manage.py check``,
and ``toolkit explain`` says whether an rpc runs a CRUD default or a handler.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .conftest import base_env, render_project, run_toolkit

SCHEMA = """\
entity Widget {
  id: uuid @primary
  name: string
  created_at: timestamp @default(now())
}

job Ping(path: string) {
  queue: default
}

service WidgetService {
  rpc CreateWidget(name: string) -> Widget {
    http: POST "/v1/widgets"
    auth: none
  }

  rpc UpdateWidget(id: uuid, name: string?) -> Widget {
    http: PATCH "/v1/widgets/{id}"
    auth: none
  }

  rpc RenameWidget(id: uuid, name: string) -> Widget {
    http: POST "/v1/widgets/{id}/rename"
    auth: none
  }
}
"""

HANDLER = """    def rename_widget(
        self, request: Request, *, id: uuid.UUID, name: str
    ) -> models.Widget:
        widget = models.Widget.objects.get(pk=id)
        widget.name = name
        widget.save()
        return widget
"""

JOB_BODY = """    from pathlib import Path

    Path(path).write_text("pong")"""


def _env() -> dict[str, str]:
    return base_env(TOOLKIT_ENV="dev")


def _drifted_project(tmp_path: Path) -> Path:
    root = render_project(tmp_path / "demo")
    schema = root / "schema" / "widgets.toolkit"
    schema.write_text(SCHEMA)
    first = run_toolkit("compile", cwd=root, env=_env())
    assert first.returncode == 0, first
    assert "[drift]" not in first.stdout + first.stderr  # in step: nothing to say
    handlers = root / "api" / "handlers.py"
    text = handlers.read_text()
    stub = re.search(r"    def rename_widget\(.*?raise NotImplementedError\n", text, re.S)
    assert stub is not None, text
    handlers.write_text(text.replace(stub.group(0), HANDLER))
    jobs = root / "api" / "jobs.py"
    jobs.write_text(jobs.read_text().replace("    raise NotImplementedError", JOB_BODY))
    again = run_toolkit("compile", cwd=root, env=_env())
    assert "[drift]" not in again.stdout + again.stderr, again
    schema.write_text(
        SCHEMA.replace(
            "UpdateWidget(id: uuid, name: string?)", "UpdateWidget(id: uuid, label: string?)"
        )
        .replace("RenameWidget(id: uuid, name: string)", "RenameWidget(id: uuid, new_name: string)")
        .replace("job Ping(path: string)", "job Ping(target: string)")
    )
    return root


def _line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def test_compile_and_check_report_handler_crud_and_job_drift_with_file_and_line(
    tmp_path: Path,
) -> None:
    root = _drifted_project(tmp_path)
    compiled = run_toolkit("compile", cwd=root, env=_env())
    assert compiled.returncode == 0, compiled  # warnings: nothing is refused
    said = compiled.stdout + compiled.stderr
    handlers = root / "api" / "handlers.py"
    rename_line = _line_of(handlers, "def rename_widget")
    update_line = _line_of(handlers, "def update_widget")  # the stub the compile appended
    job_line = _line_of(root / "api" / "jobs.py", '@job(**JOB_OPTIONS["Ping"])')
    assert (
        f"api/handlers.py:{rename_line}:1: [drift] warning: handler "
        'WidgetService.rename_widget does not take "new_name"'
    ) in said, said
    assert 'add "new_name: str" after the "*"' in said
    assert 'requires "name", which rpc WidgetService.RenameWidget' in said
    assert (
        f"api/handlers.py:{update_line}:1: [drift] warning: rpc WidgetService.UpdateWidget"
    ) in said, said
    assert (
        'parameter "label" is not a field of Widget, so PATCH /v1/widgets/{id} answers 501' in said
    )
    assert f"api/jobs.py:{job_line}:1: [drift] warning: job function ping(path)" in said, said
    assert "the worker calls it with (target)" in said

    check = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode != 0, check.stdout
    report = check.stdout + check.stderr
    assert f"toolkit_codegen_app.E010) api/handlers.py:{rename_line}: handler" in report, report
    assert f"toolkit_codegen_app.E011) api/jobs.py:{job_line}: job function ping" in report
    assert f"toolkit_codegen_app.W010) api/handlers.py:{update_line}: rpc" in report


def test_explain_says_whether_an_rpc_runs_a_crud_default_or_a_handler(tmp_path: Path) -> None:
    root = _drifted_project(tmp_path)
    created = run_toolkit("explain", "WidgetService.CreateWidget", cwd=root, env=_env())
    assert created.returncode == 0, created
    assert (
        "  runs:       the ORM CRUD default (create) unless handlers.py "
        "WidgetService.create_widget is defined"
    ) in created.stdout.splitlines()
    updated = run_toolkit("--json", "explain", "WidgetService.UpdateWidget", cwd=root, env=_env())
    runs = updated.json["data"]["runs"]
    assert runs["kind"] == "handler" and runs["crud"] is None
    assert runs["missed"] == 'parameter "label" is not a field of Widget'
