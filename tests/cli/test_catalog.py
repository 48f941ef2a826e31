"""``toolkit --help --agent``: the catalog lists every command and flag, and each is real.

The walk runs ``--help`` on every command and subcommand the catalog lists, through the
installed script, and checks that every flag the catalog names appears in that help.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.cli.conftest import GENERATE, run_toolkit
from toolkit_batteries.cli.table import COMMANDS


@pytest.fixture(scope="module")
def catalog() -> dict[str, Any]:
    ran = run_toolkit("--help", "--agent")
    assert ran.returncode == 0, ran
    assert ran.stderr == ""
    return json.loads(ran.stdout)


def _walk(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        out.append(entry)
        out.extend(_walk(entry.get("subcommands") or []))
    return out


def test_catalog_has_every_command_exit_code_and_global_flag(catalog: dict[str, Any]) -> None:
    assert set(catalog) == {"commands", "globalFlags", "exitCodes", "jsonMode"}
    names = [entry["name"] for entry in catalog["commands"]]
    assert names == sorted(info.name for info in COMMANDS)
    assert [row["code"] for row in catalog["exitCodes"]] == [0, 1, 2, 3, 4, 5]
    assert {flag["name"] for flag in catalog["globalFlags"]} >= {"--json", "--help", "--version"}
    assert "TOOLKIT_JSON=1" in catalog["jsonMode"]
    generate = next(e for e in catalog["commands"] if e["name"] == "generate")
    assert [s["name"] for s in generate["subcommands"]] == [f"generate {sub}" for sub in GENERATE]
    db = next(e for e in catalog["commands"] if e["name"] == "db")
    assert [s["name"] for s in db["subcommands"]] == ["db migrate", "db rollback", "db seed"]


def test_agent_flag_after_a_command_is_that_command_help_not_the_catalog() -> None:
    ran = run_toolkit("docs", "-h", "--agent")
    assert ran.returncode == 0
    assert ran.stdout.startswith("usage: toolkit docs")


def test_every_listed_command_and_subcommand_has_working_help(catalog: dict[str, Any]) -> None:
    entries = _walk(catalog["commands"])
    assert len(entries) >= len(COMMANDS) + 9 + 3
    for entry in entries:
        ran = run_toolkit(*entry["name"].split(), "--help")
        assert ran.returncode == 0, (entry["name"], ran)
        assert ran.stdout.startswith(f"usage: toolkit {entry['name']}"), entry["name"]
        assert entry["usage"].split()[1:3] == ran.stdout.split()[1:3]
        for flag in entry["flags"]:
            assert flag["name"] in ran.stdout, (entry["name"], flag["name"])
            assert flag["usage"], f"{entry['name']} {flag['name']} has no help text"
