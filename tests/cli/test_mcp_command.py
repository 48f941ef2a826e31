"""``toolkit mcp``: the compiler's commands as MCP tools, driven by the SDK's own client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from toolkit_batteries.cli.mcp_server import TOOLS, ToolArgumentError, arguments_for

SCHEMA = """\
entity Note {
  id: uuid @primary
  title: string
}

service NoteService {
  rpc GetNote(id: uuid) -> Note {
    http: GET "/v1/notes/{id}"
    auth: none
  }
}
"""

#: The same schema after a breaking change: the rpc is gone.
NEW_SCHEMA = """\
entity Note {
  id: uuid @primary
  title: string
}
"""


def _talk(cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Start ``toolkit mcp`` in ``cwd``, list its tools and make ``calls``."""
    seen: dict[str, Any] = {"calls": []}

    async def talk() -> None:
        with anyio.fail_after(120):
            await converse()

    async def converse() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "toolkit_batteries.cli", "mcp"], cwd=str(cwd)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            seen["tools"] = (await session.list_tools()).tools
            for name, arguments in calls:
                seen["calls"].append(await session.call_tool(name, arguments))

    anyio.run(talk)
    return seen


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "app.toolkit").write_text(SCHEMA)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "app.toolkit").write_text(SCHEMA)
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "app.toolkit").write_text(NEW_SCHEMA)
    return tmp_path


def _envelope(result: Any) -> dict[str, Any]:
    return json.loads(result.content[0].text)


def test_the_six_tools_answer_like_the_cli(project: Path) -> None:
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    seen = _talk(
        project,
        [
            ("check", {}),
            ("routes", {}),
            ("explain", {"operation": "NoteService.GetNote"}),
            ("compile", {"backends": ["openapi"]}),
            ("fmt", {}),
            ("breaking", {"old": ["old"], "new": ["new"]}),
            ("explain", {"operation": "NoteService.Nope"}),
            ("check", {"paths": ["--out"]}),
        ],
    )
    assert sorted(t.name for t in seen["tools"]) == sorted(TOOLS)
    check, routes, explain, compiled, fmt, breaking, unknown_rpc, flag = seen["calls"]

    assert _envelope(check)["exitCode"] == 0 and not check.is_error
    [route] = _envelope(routes)["data"]
    assert (route["method"], route["path"]) == ("GET", "/v1/notes/{id}")
    assert "GetNote" in explain.content[0].text and not explain.is_error
    assert _envelope(compiled)["exitCode"] == 0
    assert "openapi" in compiled.content[0].text
    assert _envelope(fmt)["command"] == "fmt"
    changes = _envelope(breaking)
    assert changes["exitCode"] == 4
    assert [c["kind"] for c in changes["data"]["changes"]] == ["service_removed"]
    # an unknown rpc is a diagnostic (an answer), a flag smuggled as a path is refused
    assert _envelope(unknown_rpc)["exitCode"] != 0 and not unknown_rpc.is_error
    assert flag.is_error and "may not start with '-'" in flag.content[0].text
    # compile is a dry run: the project is exactly as it was
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before


def test_schema_diagnostics_come_back_with_file_line_column(tmp_path: Path) -> None:
    (tmp_path / "schema").mkdir()
    (tmp_path / "schema" / "app.toolkit").write_text("entity Note {\n  id: uuid @nope\n}\n")
    [check] = _talk(tmp_path, [("check", {})])["calls"]
    [diagnostic] = _envelope(check)["data"]["diagnostics"]
    assert (diagnostic["file"], diagnostic["line"], diagnostic["column"]) == (
        "schema/app.toolkit",
        2,
        12,
    )


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("check", {"paths": "schema"}, "paths: expected a list"),
        ("check", {"force": True}, "unknown argument: force"),
        ("explain", {}, "operation: required"),
        ("explain", {"operation": "--help"}, "operation: expected"),
        ("fmt", {"write": "yes"}, "write: expected a boolean"),
        ("breaking", {"old": [], "new": ["b"]}, "at least one path"),
        ("nope", {}, "unknown tool"),
    ],
)
def test_bad_arguments_are_refused_naming_the_argument(
    tool: str, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolArgumentError, match=message):
        arguments_for(tool, arguments)


def test_fmt_writes_only_when_asked() -> None:
    assert arguments_for("fmt", {}) == ["fmt", "-l"]
    assert arguments_for("fmt", {"write": True, "paths": ["schema"]}) == ["fmt", "-w", "schema"]


#: A file outside the served directory whose text a diagnostic would echo.
OUTSIDE = "entity Secret {\n  id: uuid @primary\n  token: sk_live_do_not_leak\n}\n"


def test_schema_files_linked_from_outside_and_a_parent_project_are_refused(
    tmp_path: Path,
) -> None:
    private = tmp_path / "private"
    private.mkdir()
    (private / "secret.toolkit").write_text(OUTSIDE)
    served = tmp_path / "served"
    (served / "schema").mkdir(parents=True)
    (served / "schema" / "app.toolkit").symlink_to(private / "secret.toolkit")
    # A project around a subdirectory: without paths the CLI would read project/schema.
    project = tmp_path / "project"
    (project / "schema").mkdir(parents=True)
    (project / "schema" / "app.toolkit").write_text(OUTSIDE)
    (project / "manage.py").write_text(
        'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "demo.settings")\n'
    )
    (project / "docs").mkdir()

    linked = _talk(
        served,
        [
            ("check", {"paths": ["schema"]}),
            ("check", {}),
            ("fmt", {"write": True}),
            ("breaking", {"old": ["schema"], "new": ["schema"]}),
        ],
    )["calls"]
    [parent] = _talk(project / "docs", [("check", {})])["calls"]
    for result in (*linked, parent):
        text = result.content[0].text
        assert result.is_error, text
        assert "inside the directory the server serves" in text
        assert "sk_live" not in text
    # fmt did not replace the link with a copy of the outside file
    assert (served / "schema" / "app.toolkit").is_symlink()
    assert (private / "secret.toolkit").read_text() == OUTSIDE
