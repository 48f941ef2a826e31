"""The dispatcher: global flags anywhere, envelopes, help routes, usage errors, start-up cost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import base_env, run_toolkit


def test_json_flag_is_peeled_from_anywhere_and_gives_one_envelope(tmp_path: Path) -> None:
    before = run_toolkit("--json", "docs", "--dir", str(tmp_path / "a"))
    after = run_toolkit("docs", "--dir", str(tmp_path / "b"), "--json")
    for ran in (before, after):
        assert ran.returncode == 0, ran
        body = ran.json
        assert list(body)[:3] == ["ok", "command", "exitCode"]
        assert (body["ok"], body["command"], body["exitCode"]) == (True, "docs", 0)
        assert "toolkit.md" in {Path(f).name for f in body["data"]["files"]}
    assert (tmp_path / "a" / "toolkit.md").read_bytes() == (
        tmp_path / "b" / "toolkit.md"
    ).read_bytes()


def test_toolkit_json_env_turns_json_on_and_explicit_false_wins() -> None:
    on = run_toolkit("docs", env=base_env(TOOLKIT_JSON="1"))
    assert on.returncode == 2
    assert on.json["exitCode"] == 2 and on.json["ok"] is False
    assert "--dir is required" in on.json["error"]
    off = run_toolkit("docs", "--json=false", env=base_env(TOOLKIT_JSON="yes"))
    assert off.returncode == 2
    assert off.stdout == ""
    assert "--dir is required" in off.stderr


def test_bad_json_value_is_a_usage_error() -> None:
    ran = run_toolkit("--json=maybe", "docs")
    assert ran.returncode == 2
    assert "--json" in ran.stderr and "'maybe'" in ran.stderr


def test_unknown_command_suggests_the_closest_in_text_and_json() -> None:
    text = run_toolkit("compil")
    assert text.returncode == 2
    assert "unknown command 'compil'" in text.stderr
    assert 'did you mean "compile"?' in text.stderr
    envelope = run_toolkit("compil", "--json").json
    assert envelope == {
        "ok": False,
        "command": "",
        "exitCode": 2,
        "error": "toolkit: unknown command 'compil'",
        "hint": 'did you mean "compile"?',
    }


def test_unknown_flag_of_a_command_names_the_flag_and_exits_2() -> None:
    ran = run_toolkit("docs", "--frobnicate")
    assert ran.returncode == 2
    assert ran.stdout == ""
    assert "toolkit docs" in ran.stderr and "--frobnicate" in ran.stderr
    envelope = run_toolkit("docs", "--frobnicate", "--json").json
    assert envelope["exitCode"] == 2 and "--frobnicate" in envelope["error"]
    assert envelope["command"] == "docs"


def test_help_routes_all_reach_the_command_help() -> None:
    for args in (("help", "docs"), ("-h", "docs"), ("docs", "--help"), ("docs", "-h")):
        ran = run_toolkit(*args)
        assert ran.returncode == 0, (args, ran)
        assert ran.stdout.startswith("usage: toolkit docs"), args
        assert "--skill" in ran.stdout


def test_bare_help_and_help_word_print_usage_on_stdout() -> None:
    for args in (("help",), ("--help",), ("-q", "-h")):
        ran = run_toolkit(*args)
        assert (ran.returncode, ran.stderr) == (0, ""), args
        assert ran.stdout.startswith("usage: toolkit ")


def test_bare_toolkit_under_json_is_one_error_envelope() -> None:
    ran = run_toolkit("--json")
    assert ran.returncode == 1
    assert ran.json == {
        "ok": False,
        "command": "",
        "exitCode": 1,
        "error": "toolkit: missing command",
    }


def test_aliases_reach_the_same_command() -> None:
    for name in ("queue:work", "queue_work", "queue-work"):
        ran = run_toolkit(name, "--help")
        assert ran.returncode == 0, (name, ran)
        assert ran.stdout.startswith("usage: toolkit queue:work")


def test_quiet_drops_hints_but_keeps_the_error() -> None:
    loud = run_toolkit("compil")
    quiet = run_toolkit("compil", "-q")
    assert "did you mean" in loud.stderr
    assert "did you mean" not in quiet.stderr
    assert "unknown command 'compil'" in quiet.stderr


def test_help_imports_neither_django_nor_argparse_nor_the_compiler() -> None:
    code = (
        "import sys\n"
        "from toolkit_batteries.cli import main\n"
        "assert main(['--help']) == 0\n"
        "assert main(['--version']) == 0\n"
        "heavy = ('django', 'argparse', 'toolkit_codegen', 'pyparsing', 'rest_framework')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy), file=sys.stderr)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.strip() == "[]"


def test_a_reader_that_stops_early_ends_the_program_quietly(tmp_path: Path) -> None:
    # `config show` writes line by line; `head -n 1` leaves after the first, so the program
    # meets a closed pipe (whether it does on a given run is a race, hence five runs).
    script = Path(sys.executable).parent / "toolkit"
    for _ in range(5):
        ran = subprocess.run(
            ["bash", "-c", f"'{script}' config show | head -n 1; exit ${{PIPESTATUS[0]}}"],
            cwd=tmp_path,
            env=base_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert ran.stdout.startswith("# configuration")
        assert (ran.returncode, ran.stderr) == (0, ""), ran.stderr
