"""The tree's dependency rule between the two command front doors.

``toolkit <command>`` (``toolkit_batteries/cli/commands/*.py``) and ``manage.py <command>``
(every ``management/commands/*.py``) both call plain modules (``toolkit_batteries.serving``,
``toolkit_batteries.queue.worker_args``, ``toolkit_batteries.core.doctor``, ...): a
management command never imports the CLI, and a CLI command never imports a management
command module. Read from the source (every ``import``, at module level or inside a
function, relative ones resolved), so the rule holds without running anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "toolkit_batteries"


def module_name(path: Path) -> str:
    """Return the dotted module name of ``path`` under the repository root."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def imported_modules(source: str, module: str) -> set[str]:
    """Return every module ``source`` imports (``from x import y`` yields ``x`` and ``x.y``).

    ``importlib.import_module("...")`` calls with a literal name count as imports too.
    """
    package = module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def is_management_command(name: str) -> bool:
    """Whether ``name`` is (inside) a ``management.commands`` package of the toolkit."""
    return name.startswith("toolkit_batteries.") and ".management.commands." in f"{name}."


def violations_of_management_command(source: str, module: str) -> list[str]:
    """Return the CLI modules a management command imports."""
    return sorted(
        name
        for name in imported_modules(source, module)
        if name == "toolkit_batteries.cli" or name.startswith("toolkit_batteries.cli.")
    )


def violations_of_cli_command(source: str, module: str) -> list[str]:
    """Return the management command modules a CLI command imports (not the package)."""
    return sorted(
        name
        for name in imported_modules(source, module)
        if is_management_command(name) and not name.endswith(".management.commands")
    )


def management_commands() -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("management/commands/*.py")
        if path.name != "__init__.py" and "project_template" not in path.parts
    )


def cli_commands() -> list[Path]:
    return sorted(
        path for path in (PACKAGE / "cli" / "commands").glob("*.py") if path.name != "__init__.py"
    )


@pytest.mark.parametrize(
    ("find", "at_least", "violations", "rule"),
    [
        (
            management_commands,
            10,  # the glob finds them (queue_work, serve, doctor, ...)
            violations_of_management_command,
            "management commands must call plain modules, not the CLI",
        ),
        (
            cli_commands,
            20,
            violations_of_cli_command,
            "CLI commands must call plain modules, not management commands",
        ),
    ],
    ids=["no-management-command-imports-the-cli", "no-cli-command-imports-a-management-command"],
)
def test_commands_call_plain_modules(find, at_least, violations, rule) -> None:
    commands = find()
    assert len(commands) >= at_least
    bad = {
        module_name(path): found
        for path in commands
        if (found := violations(path.read_text(), module_name(path)))
    }
    assert bad == {}, rule


def test_the_detector_sees_each_way_of_breaking_the_rule() -> None:
    """The two rules catch absolute, relative, in-function and ``import_module`` imports."""
    cli = "toolkit_batteries.cli.commands.queue_work"
    assert violations_of_cli_command(
        "def f():\n    from toolkit_batteries.queue.management.commands.queue_work import C\n",
        cli,
    ) == [
        "toolkit_batteries.queue.management.commands.queue_work",
        "toolkit_batteries.queue.management.commands.queue_work.C",
    ]
    assert violations_of_cli_command(
        "from ...management.commands import serve\n", "toolkit_batteries.cli.commands.serve"
    ) == ["toolkit_batteries.management.commands.serve"]
    assert violations_of_cli_command(
        "import importlib\nimportlib.import_module('toolkit_batteries.management.commands.dev')\n",
        cli,
    ) == ["toolkit_batteries.management.commands.dev"]
    assert violations_of_cli_command("from toolkit_batteries.serving import serve\n", cli) == []

    command = "toolkit_batteries.management.commands.doctor"
    assert violations_of_management_command(
        "from toolkit_batteries.cli.output import CliError\n", command
    ) == ["toolkit_batteries.cli.output", "toolkit_batteries.cli.output.CliError"]
    assert violations_of_management_command("from ...cli import output\n", command) == [
        "toolkit_batteries.cli",
        "toolkit_batteries.cli.output",
    ]
    assert (
        violations_of_management_command(
            "from toolkit_batteries.core.doctor import check\n", command
        )
        == []
    )
