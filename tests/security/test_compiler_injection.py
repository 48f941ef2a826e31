"""An attacker who controls only a schema cannot make the compiler write code.

Everything runs the installed ``toolkit`` script in a rendered project, as a teammate
reviewing a schema pull request would: ``toolkit check``, ``toolkit compile``, then the
generated code is imported and served (Django's test client in the project's own
``manage.py shell``). A payload that ran would create a ``pwned`` file; none may appear.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import base_env, render_project, run_toolkit
from tests.subprocesses import run_manage

#: An http path whose ``\"\"\"`` closed the handler stub's docstring on the old code.
HOSTILE_PATH = '/v1/p"""+open("pwned","w").write("owned")+"""'
SCHEMA_WITH_HOSTILE_PATH = """\
service PS {
  rpc P() -> Probe {
    http: GET "/v1/p\\"\\"\\"+open(\\"pwned\\",\\"w\\").write(\\"owned\\")+\\"\\"\\""
    auth: none
  }
}

message Probe {
  ok: bool
}
"""

PING_SCHEMA = (
    "service S {\n  rpc Ping() -> Pong {\n    auth: none\n  }\n}\n\nmessage Pong {\n  ok: bool\n}\n"
)

#: Django's test client in the project: GET the hostile route, print the status.
SERVE_ONCE = """
from django.test import Client
import api.handlers
response = Client().get({path!r}, HTTP_HOST="localhost")
print("STATUS", response.status_code, response.content[:300])
"""


def _shell(project: Path, code: str) -> subprocess.CompletedProcess[str]:
    return run_manage(project, "shell", "-c", code, env=base_env(TOOLKIT_ENV="development"))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_project(tmp_path_factory.mktemp("inject") / "demo")


def test_http_path_with_triple_quotes_stays_text_in_the_handler_stub(project: Path) -> None:
    (project / "schema" / "probe.toolkit").write_text(SCHEMA_WITH_HOSTILE_PATH)
    try:
        checked = run_toolkit("check", cwd=project)
        assert checked.returncode == 0, checked
        compiled = run_toolkit("compile", cwd=project)
        assert compiled.returncode == 0, compiled

        handlers = (project / "api" / "handlers.py").read_text()
        tree = ast.parse(handlers)
        probe = next(
            node
            for cls in tree.body
            if isinstance(cls, ast.ClassDef) and cls.name == "PS"
            for node in cls.body
            if isinstance(node, ast.FunctionDef) and node.name == "p"
        )
        # The path is the docstring's text, byte for byte, and nothing else was written.
        doc = ast.get_docstring(probe, clean=False)
        assert doc.startswith(f"PS.P: GET {HOSTILE_PATH} (auth: ")
        assert [type(n).__name__ for n in probe.body] == ["Expr", "Raise"]

        served = _shell(project, SERVE_ONCE.format(path=HOSTILE_PATH))
        assert served.returncode == 0, served.stderr[-3000:]
        assert "STATUS 501" in served.stdout, served.stdout + served.stderr[-3000:]
        assert not (project / "pwned").exists()
    finally:
        (project / "schema" / "probe.toolkit").unlink()


@pytest.mark.parametrize(
    "directory",
    [
        "x(a=__import__('os').system('touch pwned')):#",
        "a-b",
        "a.b",
        "1ab",
        "class",
    ],
)
def test_module_directory_must_be_an_identifier(tmp_path: Path, directory: str) -> None:
    schema = tmp_path / "schema"
    (schema / directory).mkdir(parents=True)
    (schema / directory / "svc.toolkit").write_text(PING_SCHEMA)
    checked = run_toolkit("--json", "check", "schema", cwd=tmp_path)
    assert checked.returncode == 3, checked
    problems = checked.json["data"]["diagnostics"]
    assert any(
        d["file"] == f"schema/{directory}/svc.toolkit" and "is not an identifier" in d["message"]
        for d in problems
    ), problems

    out = tmp_path / "out"
    compiled = run_toolkit("compile", "--backend", "mcp", "--out", str(out), "schema", cwd=tmp_path)
    assert compiled.returncode == 3, compiled
    assert not out.exists()
    assert not (tmp_path / "pwned").exists()


def test_identifier_module_directories_still_compile_and_serve_imports(tmp_path: Path) -> None:
    schema = tmp_path / "schema"
    (schema / "billing_v2").mkdir(parents=True)
    (schema / "billing_v2" / "svc.toolkit").write_text(PING_SCHEMA)
    out = tmp_path / "out"
    compiled = run_toolkit("compile", "--backend", "mcp", "--out", str(out), "schema", cwd=tmp_path)
    assert compiled.returncode == 0, compiled
    imported = subprocess.run(
        [sys.executable, "-c", "import handlers; print(handlers.billing_v2_s_ping.__name__)"],
        cwd=out / "mcp",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert imported.stdout.strip() == "billing_v2_s_ping", imported


def test_project_compile_refuses_a_symlinked_generated_directory(tmp_path: Path) -> None:
    project = render_project(tmp_path / "demo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / "api" / "generated").symlink_to(elsewhere, target_is_directory=True)
    ran = run_toolkit("--json", "compile", cwd=project)
    assert ran.returncode == 3, ran
    problems = ran.json["data"]["diagnostics"]
    assert any(
        d["file"] == "api/generated" and "symbolic link" in d["message"] for d in problems
    ), problems
    assert list(elsewhere.iterdir()) == []
    assert not (project / "api" / "migrations" / "0001_initial.py").exists()


def test_text_diagnostics_escape_terminal_controls(tmp_path: Path) -> None:
    schema = tmp_path / "schema"
    schema.mkdir()
    name = "evil\x1b[2J\rforged.toolkit:1:1: [parse] all good.toolkit"
    (schema / name).write_text("entity {\n")
    ran = run_toolkit("check", "schema", cwd=tmp_path)
    assert ran.returncode == 3, ran
    assert "\x1b" not in ran.stderr and "\r" not in ran.stderr
    assert "evil\\x1b[2J\\rforged" in ran.stderr
    # --json keeps the real name (JSON escapes it on its own).
    as_json = run_toolkit("--json", "check", "schema", cwd=tmp_path)
    files = {d["file"] for d in json.loads(as_json.stdout)["data"]["diagnostics"]}
    assert f"schema/{name}" in files
