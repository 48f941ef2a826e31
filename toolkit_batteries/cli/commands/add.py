"""``toolkit add <battery>[/<adapter>]``: wire a battery into the project's settings.

Edits the settings module named by ``manage.py`` as text (Django is not set up, so a
project whose settings do not import yet can still be edited): the battery's app goes
into ``INSTALLED_APPS`` and its block into ``TOOLKIT``. Edits are append-only and
idempotent; the result is re-parsed before it is written.
"""

from __future__ import annotations

from argparse import Namespace

from ..output import Output, Result
from ..parser import CommandParser, add_dry_run

DESCRIPTION = """\
Add a battery to the current project's settings:

  * "toolkit_batteries.<battery>" into INSTALLED_APPS (when the battery is a Django app);
  * "<battery>": {"adapter": "<adapter>"} into TOOLKIT (the canonical adapter name:
    cache/redis is written as kvserver).

Adding a battery that is already configured with the same adapter changes nothing; a
different adapter is refused (naming the current one) unless --force replaces it. A
name that is not one of the 37 batteries becomes a plugin stanza under
TOOLKIT["plugins"], with a comment on how to wire its adapter."""

EPILOG = """\
examples:
  toolkit add cache                 # memory, the default adapter
  toolkit add cache/redis           # written as "kvserver"; needs django-toolkit[kvserver]
  toolkit add cache --adapter db --force
  toolkit add sms_gateway --adapter acme_sms     # a plugin
  toolkit add search --migrate      # and create its tables (toolkit db migrate)"""

BREADCRUMBS = ["toolkit compile", "toolkit doctor"]


def configure(parser: CommandParser) -> None:
    """Add the battery argument and ``--adapter``, ``--force``, ``--dry-run``."""
    parser.add_argument(
        "battery",
        metavar="<battery>[/<adapter>]",
        help="a battery of the catalog (cache, queue, ...) with an optional adapter, or a "
        "plugin name",
    )
    parser.add_argument(
        "--adapter",
        help="the adapter (canonical name, alias such as redis, or a dotted path); "
        "default: the battery's default adapter",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace the adapter of a battery already added"
    )
    parser.add_argument(
        "--migrate",
        action="store_true",
        help="then create the battery's tables (`toolkit db migrate`) when it has any",
    )
    add_dry_run(parser)


def has_tables(battery: str) -> bool:
    """Tell whether the battery's app ships migrations (tables ``db migrate`` creates)."""
    from pathlib import Path

    import toolkit_batteries

    migrations = Path(toolkit_batteries.__file__).parent / battery / "migrations"
    return migrations.is_dir() and any(migrations.glob("0*.py"))


def _migrate(root: object, out: Output) -> None:
    """Run ``toolkit db migrate`` in the project, in a fresh process (new settings)."""
    import subprocess
    import sys

    from ..output import CliError

    done = subprocess.run(
        [sys.executable, "-m", "toolkit_batteries.cli", "db", "migrate"],
        cwd=str(root),
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        out.line(f"  {line}")
    if done.returncode != 0:
        raise CliError(
            "the settings were edited, but `toolkit db migrate` failed (see its output)",
            exit_code=done.returncode,
            hint=(done.stderr.strip().splitlines() or [""])[-1] or None,
        )


def run(args: Namespace, out: Output) -> Result:
    """Plan the settings edit, then write it (or, with ``--dry-run``, print it)."""
    from ..project import require_project
    from ..scaffold.files import atomic_write
    from ..scaffold.project_info import settings_file
    from ..scaffold.settings_edit import add_battery

    project = require_project("add")
    path = settings_file(project)
    shown = path.relative_to(project.root).as_posix()
    edit = add_battery(
        path.read_text(encoding="utf-8"), shown, args.battery, args.adapter, force=args.force
    )
    result = edit.result
    kind = "plugin" if edit.plugin else "battery"
    data = {
        "battery": edit.battery,
        "adapter": edit.adapter,
        "plugin": edit.plugin,
        "changed": result.changed,
        "edits": result.edits,
        "settings": shown,
        "dryRun": args.dry_run,
        "extra": edit.extra,
    }
    hints = []
    if edit.suggestion:
        hints.append(edit.suggestion)
    if edit.extra:
        hints.append(
            f'the {edit.adapter} adapter needs: pip install "django-toolkit[{edit.extra}]"'
        )
    hint = "; ".join(hints) or None
    if not result.changed:
        out.line(
            f"{edit.battery} is already configured (adapter {result.current or edit.adapter}) "
            f"in {shown}; nothing changed"
        )
        return Result(data=data, hint=hint)
    if args.dry_run:
        for line in result.edits:
            out.line(f"dry run: would edit {shown}: {line}")
        return Result(data=data, hint=hint)
    atomic_write(path, result.text)
    out.line(f"added {kind} {edit.battery} (adapter {edit.adapter}) to {shown}:")
    for line in result.edits:
        out.line(f"  {line}")
    if edit.plugin:
        out.line(f"wire it as the comment above it in {shown} says")
    tables = not edit.plugin and has_tables(edit.battery)
    data["tables"] = tables
    if tables and args.migrate:
        out.line("toolkit db migrate:")
        _migrate(project.root, out)
        out.line("next: toolkit compile && toolkit doctor")
    elif tables:
        # Its tables do not exist yet: doctor would fail on them until the migration runs.
        out.line(f"next: toolkit db migrate (creates the {edit.battery} tables) && toolkit doctor")
    else:
        out.line("next: toolkit compile && toolkit doctor")
    return Result(data=data, hint=hint)
