"""compile_schema: backends run only on a valid schema; their failures become diagnostics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit_codegen import backends
from toolkit_codegen.backends import BackendError, UnknownBackendError
from toolkit_codegen.compiler import check_paths, check_sources, compile_schema, load_paths
from toolkit_codegen.nodes import Diagnostic, Position

SCHEMAS = Path(__file__).parent / "schemas"


def test_invalid_schema_runs_no_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(backends, "generate", lambda name, *_: calls.append(name) or {})
    res = check_sources({"app.toolkit": "entity A { a: strng }\n"})
    out = compile_schema(res, ["openapi"])
    assert calls == [] and out.files == {} and not out.ok
    assert out.diagnostics == res.diagnostics


def test_files_are_keyed_by_backend_and_sorted() -> None:
    res = load_paths([SCHEMAS / "spec_example"])
    out = compile_schema(res, ["openapi"])
    assert out.ok, [str(d) for d in out.diagnostics]
    assert out.backends == ("openapi",)
    assert out.files and all(k.startswith("openapi/") for k in out.files)
    merged = next(v for k, v in out.files.items() if k.endswith(".json"))
    assert json.loads(merged)["openapi"] == "3.0.3"


def test_unknown_backend_is_a_usage_error() -> None:
    res = check_sources({"app.toolkit": "enum E { a }\n"})
    with pytest.raises(UnknownBackendError, match='did you mean "openapi"'):
        compile_schema(res, ["openap"])


def test_backend_errors_become_diagnostics(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = Diagnostic(Position("app.toolkit", 3, 1), "openapi", "two rpcs on GET /a")

    def fake(name: str, *_: object) -> dict[str, str]:
        if name == "openapi":
            raise BackendError([problem])
        if name == "sql":
            raise RuntimeError("boom")
        return {"x.txt": name}

    monkeypatch.setattr(backends, "generate", fake)
    res = check_sources({"app.toolkit": "enum E { a }\n"})
    out = compile_schema(res, ["openapi", "sql", "mcp"])
    assert out.files == {"mcp/x.txt": "mcp"}
    assert [str(d) for d in out.diagnostics] == [
        "app.toolkit:1:1: [sql] internal error in the sql backend (RuntimeError: boom)",
        "app.toolkit:3:1: [openapi] two rpcs on GET /a",
    ]
    assert not out.ok


def test_check_paths_resolves_without_backends(tmp_path: Path) -> None:
    (tmp_path / "app.toolkit").write_text("entity A {\n  id: uuid @primary\n}\n")
    res = check_paths([tmp_path])
    assert res.ok and [e.name for e in res.schema.entities] == ["A"]
    assert res.paths == (f"{tmp_path.as_posix()}/app.toolkit",)


def test_package_api_is_lazy_and_cheap() -> None:
    code = (
        "import sys, toolkit_codegen\n"
        "from toolkit_codegen import load_sources, format_source, compare\n"
        "assert 'pyparsing' not in sys.modules, 'pyparsing imported before parsing'\n"
        "assert 'toolkit_batteries' not in sys.modules\n"
        "res = load_sources({'app.toolkit': 'enum E { a }'})\n"
        "assert res.ok and 'pyparsing' in sys.modules\n"
        "print(sorted(set(toolkit_codegen.__all__) - set(dir(toolkit_codegen))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
