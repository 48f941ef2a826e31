"""``toolkit completion bash|zsh|fish``: the scripts complete the real commands and flags.

The bash script is sourced into ``bash --norc --noprofile`` and its completion function is
driven as readline would drive it (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT), then
COMPREPLY is read back. zsh and fish run their scripts too (zsh with the completion-system
builtins stubbed, fish through ``complete -C``), after the scripts' structure is checked.
Both shells are part of the project's setup (``scripts/system-packages.sh``, run by ``make
services`` and ``make test``): a machine without them fails these tests, naming the script,
instead of passing on the structure alone. Nothing is skipped.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import GENERATE, base_env, run_toolkit
from toolkit_batteries.cli.table import COMMANDS


def run_shell(argv: list[str], input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a real shell (``argv``) fed ``input``; it must exit 0 and write nothing to stderr."""
    proc = subprocess.run(
        argv, input=input, capture_output=True, text=True, timeout=60, check=False, env=base_env()
    )
    assert proc.returncode == 0, proc
    assert proc.stderr == "", proc.stderr
    return proc


DB = ["migrate", "rollback", "seed"]


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each shell's script, rendered through the installed ``toolkit``, written to a file."""
    directory = tmp_path_factory.mktemp("completion")
    out: dict[str, Path] = {}
    for shell in ("bash", "zsh", "fish"):
        ran = run_toolkit("completion", shell)
        assert ran.returncode == 0, ran
        assert ran.stderr == ""
        path = directory / shell
        path.write_text(ran.stdout, encoding="utf-8")
        out[shell] = path
    return out


@pytest.fixture(scope="module")
def catalog() -> dict[str, Any]:
    ran = run_toolkit("--help", "--agent")
    assert ran.returncode == 0, ran
    return json.loads(ran.stdout)


def _entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        out.append(entry)
        out.extend(_entries(entry.get("subcommands") or []))
    return out


def _flag_names(entry: dict[str, Any]) -> set[str]:
    return {n for f in entry["flags"] for n in (f["name"], f.get("shorthand")) if n}


# --------------------------------------------------------------------------- bash


def _comp_words(line: str) -> list[str]:
    """Split ``line`` as bash does for COMP_WORDS: on blanks, and ':' as a word of its own."""
    words = [piece for word in line.split() for piece in re.split(r"(:)", word) if piece]
    if not line or line[-1].isspace():
        words.append("")
    return words


def bash_complete(script: Path, lines: list[str]) -> list[list[str]]:
    """COMPREPLY of ``_toolkit`` for each command line (cursor at the end), in one bash."""
    driver = [f"source {shlex.quote(str(script))}"]
    for line in lines:
        words = _comp_words(line)
        driver += [
            "COMP_WORDS=(" + " ".join(shlex.quote(w) for w in words) + ")",
            f"COMP_CWORD={len(words) - 1}",
            f"COMP_LINE={shlex.quote(line)}",
            f"COMP_POINT={len(line)}",
            "COMPREPLY=()",
            '_toolkit toolkit "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"',
            "printf '%s\\n' \"${COMPREPLY[@]}\"",
            "echo '<end>'",
        ]
    proc = run_shell(["bash", "--norc", "--noprofile"], input="\n".join(driver) + "\n")
    replies = proc.stdout.split("<end>\n")
    assert replies[-1] == ""
    return [[w for w in reply.split("\n") if w] for reply in replies[:-1]]


BASH_CASES = [
    ("toolkit ge", ["generate"]),
    ("toolkit generate e", ["entity"]),
    ("toolkit db ", DB),
    ("toolkit compile --b", ["--backend"]),
    # bash splits queue:w into `queue` `:` `w` and replaces only `w`: the reply is `work`.
    ("toolkit queue:w", ["work"]),
    ("toolkit queue:", ["work"]),
    ("toolkit sch", ["schedule:run"]),
    ("toolkit schedule:run --t", ["--tick"]),
    ("toolkit queue_work --po", ["--pool"]),
    ("toolkit queue:work --pool ", ["threads", "processes"]),
    ("toolkit config ", ["show"]),
    ("toolkit config show --format j", ["json"]),
    ("toolkit --json db migrate --ad", ["--adapter"]),
    ("toolkit db rollback -", None),
    ("toolkit generate ", GENERATE),
    ("toolkit completion ", ["bash", "zsh", "fish"]),
    ("toolkit --ver", ["--version"]),
    ("toolkit compile --json --no", ["--no-color"]),
    # Where nothing is known (a value, a path), nothing is offered: `complete -o default`
    # then falls back to file names.
    ("toolkit compile ", []),
    ("toolkit compile --out ", []),
    ("toolkit explain ", []),
]


def test_bash_completes_commands_subcommands_flags_and_values(scripts: dict[str, Path]) -> None:
    replies = bash_complete(scripts["bash"], [line for line, _ in BASH_CASES])
    for (line, expected), reply in zip(BASH_CASES, replies, strict=True):
        if expected is None:
            assert {"--adapter", "--dry-run", "--dsn", "-n", "--json"} <= set(reply), reply
        else:
            assert reply == expected, (line, reply)


def test_bash_offers_every_command_and_every_flag_of_the_catalog(
    scripts: dict[str, Path], catalog: dict[str, Any]
) -> None:
    entries = _entries(catalog["commands"])
    lines = ["toolkit ", "toolkit -"] + [f"toolkit {entry['name']} -" for entry in entries]
    replies = bash_complete(scripts["bash"], lines)
    assert replies[0] == sorted(info.name for info in COMMANDS)
    assert set(replies[1]) == _flag_names({"flags": catalog["globalFlags"]})
    for entry, reply in zip(entries, replies[2:], strict=True):
        expected = _flag_names(entry) | {"--json", "--quiet", "-q", "--no-color", "--help", "-h"}
        assert set(reply) == expected, entry["name"]


def test_bash_registers_the_function_with_file_name_fallback(scripts: dict[str, Path]) -> None:
    proc = subprocess.run(
        [
            "bash",
            "--norc",
            "--noprofile",
            "-c",
            f"source {shlex.quote(str(scripts['bash']))} && complete -p toolkit",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc
    assert proc.stdout.strip() == "complete -o default -F _toolkit toolkit"


def _require_shell(name: str) -> None:
    """Fail (not skip, not pass on the structure alone) when the setup did not install it."""
    if shutil.which(name) is None:
        pytest.fail(
            f"{name} is not installed: run scripts/system-packages.sh (make services does), "
            f"which installs the shells whose completion scripts these tests run"
        )


# --------------------------------------------------------------------------- zsh

# The completion-system functions, stubbed to print what they were handed.
_ZSH_STUBS = r"""
compdef() { print -r -- "compdef $*" }
_describe() { local arr=${@[-1]}; print -rl -- ${(P)arr} }
compadd() { [[ $1 == -a ]] && print -rl -- ${(P)2} }
_files() { print -r -- '<files>' }
"""


def zsh_complete(script: Path, lines: list[str]) -> list[list[str]]:
    """Return what ``_toolkit`` offers for each line (names only, unfiltered by prefix)."""
    driver = [_ZSH_STUBS, f"source {shlex.quote(str(script))}"]
    for line in lines:
        words = line.split() + ([""] if line.endswith(" ") else [])
        driver += [
            "words=(" + " ".join(shlex.quote(w) for w in words) + ")",
            "CURRENT=${#words}",
            "PREFIX=${words[CURRENT]}",
            "_toolkit",
            "print -r -- '<end>'",
        ]
    proc = run_shell(["zsh", "-f"], input="\n".join(driver) + "\n")
    out = proc.stdout
    assert out.startswith("compdef _toolkit toolkit\n"), out[:200]
    replies = out.removeprefix("compdef _toolkit toolkit\n").split("<end>\n")
    # `name:description` with `\:` inside names: keep the name, unescaped.
    return [
        [re.split(r"(?<!\\):", item)[0].replace("\\:", ":") for item in reply.split("\n") if item]
        for reply in replies[:-1]
    ]


def test_zsh_script(scripts: dict[str, Path]) -> None:
    text = scripts["zsh"].read_text()
    assert text.startswith("#compdef toolkit\n")
    for info in COMMANDS:
        assert "'" + info.name.replace(":", "\\:") + ":" + info.short in text, info.name
    for sub in GENERATE:
        assert f"'{sub}:" in text
    assert "'generate entity --field') _toolkit_reply=()" in text
    assert "'queue:work --pool') _toolkit_reply=('threads' 'processes')" in text
    assert "compdef _toolkit toolkit" in text
    _require_shell("zsh")
    syntax = subprocess.run(["zsh", "-n", str(scripts["zsh"])], capture_output=True, check=False)
    assert syntax.returncode == 0, syntax
    lines = [
        "toolkit ",
        "toolkit generate e",
        "toolkit db ",
        "toolkit compile --b",
        "toolkit queue:work --pool ",
        "toolkit queue_work --c",
        "toolkit compile --out ",
        "toolkit compile ",
        "toolkit completion ",
    ]
    replies = dict(zip(lines, zsh_complete(scripts["zsh"], lines), strict=True))
    assert replies["toolkit "] == sorted(info.name for info in COMMANDS)
    assert replies["toolkit generate e"] == GENERATE
    assert replies["toolkit db "] == DB
    assert {"--backend", "--out", "--dry-run", "--json"} <= set(replies["toolkit compile --b"])
    assert replies["toolkit queue:work --pool "] == ["threads", "processes"]
    assert "--concurrency" in replies["toolkit queue_work --c"]
    assert replies["toolkit compile --out "] == ["<files>"]
    assert replies["toolkit compile "] == ["<files>"]
    assert replies["toolkit completion "] == ["bash", "zsh", "fish"]


# --------------------------------------------------------------------------- fish


def fish_complete(script: Path, lines: list[str]) -> list[list[str]]:
    """``complete -C`` for each line, after sourcing the script: the candidates' names."""
    body = [f"source {shlex.quote(str(script))}"]
    for line in lines:
        body += [f"complete -C {shlex.quote(line)}", "echo '<end>'"]
    proc = run_shell(["fish", "--no-config", "-c", "\n".join(body)])
    replies = proc.stdout.split("<end>\n")
    return [[item.split("\t")[0] for item in r.split("\n") if item] for r in replies[:-1]]


def test_fish_script(scripts: dict[str, Path], tmp_path: Path) -> None:
    text = scripts["fish"].read_text()
    command_lines = [
        line
        for line in text.splitlines()
        if line.startswith("complete -c toolkit -n '__toolkit_at' -f -a ")
    ]
    assert len(command_lines) == len(COMMANDS)
    for info in COMMANDS:
        assert sum(f"-a '{info.name}' " in line for line in command_lines) == 1, info.name
    for sub in GENERATE:
        assert f"complete -c toolkit -n '__toolkit_at generate' -f -a '{sub}'" in text
    assert "-n '__toolkit_at compile' -l 'backend' -r" in text
    assert "-n '__toolkit_at queue:work' -l 'pool' -x -a 'threads processes'" in text
    _require_shell("fish")
    (tmp_path / "schema.toolkit").write_text("")
    lines = [
        "toolkit ge",
        "toolkit generate e",
        "toolkit db ",
        "toolkit compile --b",
        "toolkit queue:w",
        "toolkit queue:work --pool ",
        "toolkit config show --format ",
        "toolkit queue_work --o",
        "toolkit completion ",
        f"toolkit compile {tmp_path}/sch",
    ]
    replies = dict(zip(lines, fish_complete(scripts["fish"], lines), strict=True))
    assert replies["toolkit ge"] == ["generate"]
    assert replies["toolkit generate e"] == ["entity"]
    assert replies["toolkit db "] == DB
    assert replies["toolkit compile --b"] == ["--backend"]
    assert replies["toolkit queue:w"] == ["queue:work"]
    assert sorted(replies["toolkit queue:work --pool "]) == ["processes", "threads"]
    assert sorted(replies["toolkit config show --format "]) == ["json", "text"]
    assert replies["toolkit queue_work --o"] == ["--once"]
    assert sorted(replies["toolkit completion "]) == ["bash", "fish", "zsh"]
    assert replies[f"toolkit compile {tmp_path}/sch"] == [f"{tmp_path}/schema.toolkit"]


# --------------------------------------------------------------------------- the command


def test_json_carries_the_same_script_as_text(scripts: dict[str, Path]) -> None:
    for shell in ("bash", "zsh", "fish"):
        ran = run_toolkit("completion", shell, "--json")
        assert ran.returncode == 0, ran
        envelope = ran.json
        assert envelope["ok"] is True
        assert envelope["command"] == "completion"
        assert envelope["data"] == {"shell": shell, "script": scripts[shell].read_text()}


@pytest.mark.parametrize("args", [("tcsh",), ()])
def test_unknown_or_missing_shell_is_a_usage_error(args: tuple[str, ...]) -> None:
    ran = run_toolkit("completion", *args)
    assert ran.returncode == 2, ran
    assert ran.stdout == ""
    assert "toolkit completion" in ran.stderr
    if args:
        assert "invalid choice: 'tcsh'" in ran.stderr
    ran = run_toolkit("completion", *args, "--json")
    assert ran.returncode == 2
    assert ran.json["ok"] is False
    assert ran.json["exitCode"] == 2


def test_help_shows_the_installation_lines() -> None:
    ran = run_toolkit("completion", "--help")
    assert ran.returncode == 0, ran
    assert "toolkit completion bash > ~/.local/share/bash-completion/completions/toolkit" in (
        ran.stdout
    )
    assert 'toolkit completion zsh > "${fpath[1]}/_toolkit"' in ran.stdout
    assert "toolkit completion fish > ~/.config/fish/completions/toolkit.fish" in ran.stdout
