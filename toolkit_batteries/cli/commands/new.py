"""``toolkit new <name>``: a new project from ``project_template/``.

The template is rendered by Django's own ``startproject`` machinery (the same result as
``django-admin startproject --template project_template --extension=py,toolkit,md``)
into a temporary directory, ``--batteries`` are added to its settings there, and only then
are the files copied into the target: a failure leaves the target as it was.
"""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

from ..output import Output, Result, UsageError
from ..parser import CommandParser, add_dry_run

DESCRIPTION = """\
Create a project: a Django project on the toolkit batteries with the embedded SQLite
database, the reference application (register, login, me), a sample schema
(schema/app.toolkit) and the API app it compiles into. It needs no external service.

The name may hold letters, digits, '-' and '_'; the Python package is the name with
'-' turned into '_' and must not shadow an importable module (django, test, ...)."""

EPILOG = """\
examples:
  toolkit new shop
  toolkit new shop --dir ~/src/shop --batteries cache/redis,queue
  toolkit new --list-batteries"""

BREADCRUMBS = ["toolkit generate", "toolkit compile"]


def configure(parser: CommandParser) -> None:
    """Add the project name and the flags."""
    parser.add_argument("name", nargs="?", help="project name: letters, digits, '-' and '_' only")
    parser.add_argument("--dir", help="directory to create the project in (default: ./<name>)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty directory (the template's files are overwritten, "
        "other files are kept)",
    )
    parser.add_argument(
        "--batteries",
        metavar="A,B",
        help="extra batteries to add, comma-separated, each battery[/adapter] "
        "(e.g. cache/redis,queue)",
    )
    parser.add_argument(
        "--list-batteries",
        action="store_true",
        help="print the batteries with their default adapter, status and adapters "
        "(the products they talk to first), then exit",
    )
    add_dry_run(parser)


def run(args: Namespace, out: Output) -> Result:
    """Create the project (or list the batteries)."""
    if args.list_batteries:
        return _list_batteries(out)
    if not args.name:
        raise UsageError("missing project name", hint="toolkit new <name> [--dir DIR]")
    import tempfile

    from ..scaffold.names import check_package
    from ..scaffold.render import check_target, deliver, list_files, render_project

    package = check_package(args.name)
    target = Path(args.dir) if args.dir else Path(args.name)
    shown = args.dir or f"./{args.name}"
    check_target(target, shown, args.force)
    specs = [item.strip() for item in (args.batteries or "").split(",") if item.strip()]
    with tempfile.TemporaryDirectory(prefix="toolkit-new-") as temp:
        staging = Path(temp) / "project"
        staging.mkdir()
        render_project(package, staging)
        batteries = _add_batteries(staging, package, specs)
        files = list_files(staging)
        where = str(target.resolve())
        summary = (
            f"project {args.name} (package {package}) in {where} "
            f"with batteries: {', '.join(batteries)}"
        )
        data = {
            "name": args.name,
            "package": package,
            "dir": where,
            "files": files,
            "batteries": batteries,
            "dryRun": args.dry_run,
        }
        deliver(staging, target, files, summary, out, dry_run=args.dry_run)
    if args.dry_run:
        return Result(data=data)
    out.line("next steps:")
    # A project is production unless told otherwise, and production settings refuse to load
    # without DJANGO_SECRET_KEY: the first steps on a laptop are development.
    for step in (
        f"cd {shown}",
        "export TOOLKIT_ENV=development   # production: DJANGO_SECRET_KEY instead (README.md)",
        "toolkit compile",
        "toolkit db migrate",
        "toolkit serve",
    ):
        out.line(f"  {step}")
    return Result(data=data)


def _add_batteries(root: Path, package: str, specs: list[str]) -> list[str]:
    """Add ``--batteries`` to the staged settings; return every battery the project has."""
    import ast

    from toolkit_batteries.core.catalog import SERVICES
    from toolkit_batteries.core.errors import did_you_mean

    from ..output import InvalidInputError
    from ..scaffold.batteries import find_battery, split_spec
    from ..scaffold.files import atomic_write
    from ..scaffold.pyedit import find_assign
    from ..scaffold.settings_edit import add_battery

    settings = root / package / "settings.py"
    text = settings.read_text(encoding="utf-8")
    shown = f"{package}/settings.py"
    for spec in specs:
        name, adapter = split_spec(spec, None)
        if find_battery(name) is None:
            raise InvalidInputError(
                f"unknown battery {name!r}{did_you_mean(name, SERVICES)}",
                hint="`toolkit new --list-batteries` lists them; add plugins later with "
                "`toolkit add <name>`",
            )
        # An explicit adapter replaces the template's choice (db/postgres); none keeps it.
        text = add_battery(text, shown, spec, None, force=adapter is not None).result.text
    atomic_write(settings, text)
    listed: list[str] = []
    for node in ast.walk(find_assign(ast.parse(text), "INSTALLED_APPS") or ast.List([])):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value.removeprefix("toolkit_batteries.")
            if node.value.startswith("toolkit_batteries.") and name in SERVICES:
                listed.append(name)
    extra = [find_battery(split_spec(s, None)[0]).name for s in specs]  # type: ignore[union-attr]
    return list(dict.fromkeys([*listed, *extra]))


def _list_batteries(out: Output) -> Result:
    from ..scaffold.batteries import all_batteries

    rows = all_batteries()
    out.line(f"{'battery':<14}{'default':<10}{'app':<5}{'status':<16}adapters")
    for row in rows:
        status = "implemented" if row.implemented else "planned"
        adapters = ", ".join(row.shown_adapters())
        out.line(
            f"{row.name:<14}{row.default:<10}{'yes' if row.app else 'no':<5}{status:<16}{adapters}"
        )
    done = sum(1 for row in rows if row.implemented)
    out.line(f"{len(rows)} batteries, {done} with adapters implemented in this release")
    return Result(
        data={
            "batteries": [
                {
                    "name": row.name,
                    "default": row.default,
                    "adapters": list(row.adapters),
                    "implemented": list(row.implemented),
                    "aliases": row.aliases,
                    "products": row.products,
                    "app": row.app,
                }
                for row in rows
            ]
        }
    )
