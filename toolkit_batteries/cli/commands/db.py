"""``toolkit db``: migrate, roll back and seed the database.

Inside a project (``manage.py`` found, no ``--dsn``) the database is the project's own:
``migrate`` applies the Django migrations, ``rollback`` unapplies the newest ones, and
``seed`` runs each app's ``seeds.run()``. Outside a project, or given ``--dsn`` or schema
files, ``migrate`` compiles ``.toolkit`` files with the ``sql`` backend and brings a
SQLite file or a PostgreSQL database to them by diffing the live catalog
(:mod:`toolkit_batteries.cli.sqlmigrate`, whose errors become
:class:`CliError` with the same exit code); ``rollback`` reverses the newest statements
recorded in ``toolkit_schema_migrations``. A DSN is only ever printed masked.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import Any

from ..output import CliError, InvalidInputError, Output, Result, UnreachableError, UsageError
from ..parser import CommandParser, add_dry_run
from ..project import Project, find_project, require_project, setup_django

DESCRIPTION = """\
Database commands. Inside a project (no --dsn): `migrate` applies the Django migrations to
the configured database, `rollback` unapplies the newest ones, `seed` runs every app's
seeds.run(). Outside a project (or with --dsn / schema files): `migrate` compiles the
schema and applies it to a SQLite file (sqlfile) or a PostgreSQL database (sqlserver),
recording each statement in toolkit_schema_migrations; `rollback` reverses the newest
recorded statements."""

EPILOG = """\
examples:
  toolkit db migrate                                  # inside a project
  toolkit db migrate --dsn app.db schema/             # SQLite file, outside a project
  toolkit db migrate --adapter sqlserver --dsn postgres://app@db/app schema/
  toolkit db migrate --dry-run schema/                # print the bootstrap DDL
  toolkit db rollback -n 2 --dsn app.db
  toolkit db seed"""

SUBCOMMANDS = ("migrate", "rollback", "seed")


def _adapter(value: str) -> str:
    from toolkit_batteries.cli.sqlmigrate.target import normalize_adapter

    try:
        return normalize_adapter(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid adapter {value!r} (want sqlfile or sqlserver; aliases sqlite, postgres)"
        ) from None


def _target_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter",
        type=_adapter,
        choices=("sqlfile", "sqlserver"),
        default=None,
        help="sqlfile (SQLite file, the default) or sqlserver (PostgreSQL); "
        "inferred from --dsn when omitted",
    )
    parser.add_argument(
        "--dsn",
        default=None,
        help="the database: a file path (sqlfile) or a postgres:// URL (sqlserver); "
        "printed with its password masked",
    )


def configure(parser: CommandParser) -> None:
    """Add the ``migrate``, ``rollback`` and ``seed`` subcommands."""
    sub = parser.add_subparsers(dest="subcommand", metavar="<subcommand>")

    migrate = sub.add_parser(
        "migrate",
        help="apply the project's migrations, or a schema to --dsn",
        description="Inside a project (no --dsn, no schema files): apply the Django "
        "migrations. Otherwise compile the schema files (default: ./schema) and apply "
        "them to --dsn: missing tables are created, existing ones are diffed.",
    )
    _target_flags(migrate)
    add_dry_run(migrate)
    migrate.add_argument(
        "--drop-columns",
        action="store_true",
        help="drop columns the schema no longer declares (kept, with a warning, otherwise)",
    )
    migrate.add_argument(
        "paths", nargs="*", metavar="schema", help="schema files or directories (.toolkit)"
    )
    migrate.set_defaults(handler=run_migrate)

    rollback = sub.add_parser(
        "rollback",
        help="undo the newest N migrations (project) or statements (--dsn)",
        description="Inside a project (no --dsn): unapply the newest N applied Django "
        "migrations of the project's apps. Otherwise reverse the newest N statements "
        "recorded in toolkit_schema_migrations (CREATE TABLE is never reversed).",
    )
    from toolkit_batteries.db.rollback import add_count_flag

    add_count_flag(
        rollback, help="how many migrations or statements to undo (default 1, at least 1)"
    )
    _target_flags(rollback)
    add_dry_run(rollback)
    rollback.set_defaults(handler=run_rollback)

    seed = sub.add_parser(
        "seed",
        help="run every app's seeds.run() in a transaction",
        description="Run seeds.run() of every installed app that has a seeds module "
        "(project apps first; django.* and toolkit_batteries.* are skipped), each inside "
        "transaction.atomic(). `toolkit generate seed` writes one.",
    )
    from toolkit_batteries.db.seeding import add_seed_flags

    add_seed_flags(seed)
    seed.set_defaults(handler=run_seed)


def run(args: argparse.Namespace, out: Output) -> Result:
    """Without a subcommand there is nothing to do."""
    raise UsageError(f"missing subcommand (want: {', '.join(SUBCOMMANDS)})")


# --------------------------------------------------------------------------- migrate


def run_migrate(args: argparse.Namespace, out: Output) -> Result:
    """Dispatch to the project's Django migrations or to the schema applier."""
    project = find_project()
    if project is not None and not args.dsn and not args.paths:
        if args.adapter or args.drop_columns:
            raise UsageError(
                "--adapter and --drop-columns apply to schema migrations: give --dsn or "
                "schema files (inside a project `db migrate` applies the Django migrations)"
            )
        return _migrate_project(project, args.dry_run, out)
    return _migrate_schema(project, args, out)


def _database(connection: Any) -> str:
    """Return ``<vendor> <name>`` for a Django connection, without a password."""
    settings = connection.settings_dict
    name = str(settings.get("NAME") or "")
    if connection.vendor == "sqlite":
        return f"sqlite {name}"
    host = settings.get("HOST") or "localhost"
    port = settings.get("PORT") or ""
    user = settings.get("USER") or ""
    where = f"{host}:{port}" if port else str(host)
    return f"{connection.vendor} {user + '@' if user else ''}{where}/{name}"


def _missing_sqlite_file(connection: Any) -> bool:
    """Tell whether the project's SQLite file does not exist yet (a dry run must not make it)."""
    if connection.vendor != "sqlite":
        return False
    name = str(connection.settings_dict.get("NAME") or "")
    in_memory = name in ("", ":memory:") or "mode=memory" in name
    return not in_memory and not Path(name).exists()


def _all_migrations() -> list[str]:
    """Return every migration of the project, in an order Django could apply them."""
    from django.db.migrations.loader import MigrationLoader

    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    ordered: dict[tuple[str, str], None] = {}
    for leaf in graph.leaf_nodes():
        for node in graph.forwards_plan(leaf):
            ordered.setdefault(node, None)
    return [f"{app}.{name}" for app, name in ordered]


def _django_executor(connection: Any, database: str) -> Any:
    from django.db.migrations.executor import MigrationExecutor
    from django.db.utils import OperationalError

    try:
        return MigrationExecutor(connection)
    except OperationalError as exc:
        from toolkit_batteries.core.redaction import redact_string

        first = (str(exc).strip().splitlines() or ["no answer"])[0]
        raise UnreachableError(
            f"cannot reach the database ({database}): {redact_string(first)}"
        ) from None


def _migrate_project(project: Project, dry_run: bool, out: Output) -> Result:
    """Apply the project's migrations to every ``DATABASES`` alias.

    ``django_databases(TOOLKIT)`` gives a battery with a database of its own (its
    ``dsn``) an alias of its own; its tables are migrations like any other, so each alias
    is migrated (``manage.py migrate --database <alias>``), ``default`` first.
    """
    setup_django(project)
    from django.db import DEFAULT_DB_ALIAS, connections

    from ..project import call_management

    aliases = [DEFAULT_DB_ALIAS, *(a for a in connections if a != DEFAULT_DB_ALIAS)]
    plans: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for alias in aliases:
        connection = connections[alias]
        names[alias] = _database(connection)
        if dry_run and _missing_sqlite_file(connection):
            plans[alias] = _all_migrations()  # connecting would create the file
        else:
            executor = _django_executor(connection, names[alias])
            plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
            plans[alias] = [f"{migration.app_label}.{migration.name}" for migration, _ in plan]
    pending, database = plans[DEFAULT_DB_ALIAS], names[DEFAULT_DB_ALIAS]
    others = {names[a]: plans[a] for a in aliases[1:]}
    if dry_run:
        for alias in aliases:
            count = len(plans[alias])
            out.line(f"dry run: {count} unapplied migration(s) on {names[alias]}; nothing applied")
            for name in plans[alias]:
                out.line(f"  would apply {name}")
        data = {"applied": [], "pending": pending, "database": database, "dry_run": True}
        if others:
            data["other_databases"] = others
        return Result(data=data)
    for alias in aliases:
        call_management("migrate", "--no-input", "--database", alias, out=out)
        out.line(f"✔ applied {len(plans[alias])} migration(s) to {names[alias]}")
    data = {"applied": pending, "database": database, "dry_run": False}
    if others:
        data["other_databases"] = others
    return Result(data=data)


def _schema_paths(project: Project | None, paths: list[str], out: Output) -> list[str]:
    if paths:
        return paths
    default = project.schema_dir if project is not None else Path("schema")
    if default.is_dir():
        out.err(f"using the schema files under {default}")
        return [str(default)]
    raise UsageError(
        "no input .toolkit files given (pass schema files or directories, or run it where "
        "./schema exists)"
    )


def _load_schema(paths: list[str], out: Output) -> Any:
    from toolkit_codegen import load_paths

    result = load_paths(paths)
    for diagnostic in result.diagnostics:
        out.err(str(diagnostic))
    if not result.ok:
        failed = len(result.failed_files) or 1
        raise InvalidInputError(
            f"{failed} file(s) failed to compile",
            data={"diagnostics": [str(d) for d in result.errors]},
        )
    if not result.paths:
        raise UsageError("no input .toolkit files given")
    return result.schema


def _cli_error(exc: Any) -> CliError:
    """Return the CliError of a :class:`~toolkit_batteries.cli.sqlmigrate.SqlMigrateError`."""
    kinds = {2: UsageError, 3: InvalidInputError, 5: UnreachableError}
    return kinds.get(exc.exit_code, CliError)(exc.message, exit_code=exc.exit_code, hint=exc.hint)


def _migrate_schema(project: Project | None, args: argparse.Namespace, out: Output) -> Result:
    from toolkit_batteries.cli import sqlmigrate

    try:
        return _apply_schema(project, args, out)
    except sqlmigrate.SqlMigrateError as exc:
        raise _cli_error(exc) from None


def _apply_schema(project: Project | None, args: argparse.Namespace, out: Output) -> Result:
    from toolkit_batteries.cli import sqlmigrate

    paths = _schema_paths(project, list(args.paths), out)
    if not args.dsn and not args.dry_run:
        raise UsageError(
            "--dsn is required to apply a schema (a file path for sqlfile, a postgres:// URL "
            "for sqlserver); --dry-run without --dsn prints the bootstrap DDL"
        )
    target = sqlmigrate.parse_target(args.adapter, args.dsn) if args.dsn else None
    schema = _load_schema(paths, out)
    adapter = target.adapter if target else (args.adapter or "sqlfile")
    dialect = sqlmigrate.ADAPTERS[adapter]
    desired = sqlmigrate.desired_schema(schema, dialect)
    data: dict[str, Any] = {"adapter": adapter, "dry_run": bool(args.dry_run)}
    if target is None:
        from toolkit_codegen.backends.sql import render_ddl

        bootstrap = sqlmigrate.plan(desired, None)
        out.line(f"-- dry run: the bootstrap DDL for {adapter} ({dialect}); nothing was written")
        out.line(render_ddl(schema, dialect).rstrip())
        data.update(statements=[s.sql for s in bootstrap.statements], applied=0, warnings=[])
        return Result(data=data)
    data["dsn"] = target.display
    result = sqlmigrate.migrate(
        target, desired, dry_run=args.dry_run, drop_columns=args.drop_columns
    )
    for warning in result.warnings:
        out.err(f"warning: {warning}")
    data.update(
        statements=[s.sql for s in result.statements],
        applied=result.applied,
        warnings=result.warnings,
    )
    if args.dry_run:
        out.line(
            f"dry run: would apply {len(result.statements)} statement(s) to {target.display} "
            f"via {adapter}; nothing was written"
        )
        for statement in result.statements:
            out.line(f"{statement.sql};")
        return Result(data=data)
    for statement in result.statements:
        out.line(f"  + {statement.summary}")
    note = " (already up to date)" if not result.applied else ""
    out.line(f"✔ applied {result.applied} statement(s) via {adapter}{note}")
    return Result(data=data)


# --------------------------------------------------------------------------- rollback


def run_rollback(args: argparse.Namespace, out: Output) -> Result:
    """Undo the newest N project migrations, or N recorded statements of --dsn."""
    if args.count < 1:
        raise UsageError(f"-n must be at least 1 (got {args.count})")
    project = find_project()
    if project is not None and not args.dsn:
        if args.adapter:
            raise UsageError("--adapter needs --dsn (inside a project rollback uses Django)")
        return _rollback_project(project, args.count, args.dry_run, out)
    if not args.dsn:
        raise UsageError(
            "--dsn is required outside a project (the database whose "
            "toolkit_schema_migrations to roll back)"
        )
    from toolkit_batteries.cli import sqlmigrate

    try:
        target = sqlmigrate.parse_target(args.adapter, args.dsn)
        result = sqlmigrate.rollback(target, args.count, dry_run=args.dry_run)
    except sqlmigrate.SqlMigrateError as exc:
        raise _cli_error(exc) from None
    rows = [{"id": r.id, "statement": r.statement, "inverse": r.inverse} for r in result.reversed]
    data: dict[str, Any] = {
        "adapter": target.adapter,
        "dsn": target.display,
        "rolled_back": rows,
        "skipped": [{"id": r.id, "statement": r.statement} for r in result.skipped],
        "dry_run": bool(args.dry_run),
    }
    if result.ledger_missing:
        out.line(f"nothing to roll back: {target.display} has no toolkit_schema_migrations table")
        return Result(data=data)
    if result.skipped:
        out.line(
            f"skipped {len(result.skipped)} statement(s) that are never reversed "
            "(CREATE TABLE / CREATE SCHEMA stay recorded)"
        )
    if args.dry_run:
        out.line(
            f"dry run: would roll back {len(rows)} statement(s) via the {target.adapter} "
            "adapter; nothing was changed"
        )
        for row in result.reversed:
            out.line(f"{row.inverse};")
        return Result(data=data)
    for row in result.reversed:
        out.line(f"  - {row.statement.splitlines()[0]}")
    out.line(f"rolled back {len(rows)} statement(s) via the {target.adapter} adapter")
    return Result(data=data)


def _stream(out: Output) -> Any:
    """Where management commands print: stdout, or a sink under --json."""
    return io.StringIO() if out.json_mode else sys.stdout


def _rollback_project(project: Project, count: int, dry_run: bool, out: Output) -> Result:
    setup_django(project)
    from django.core.management.base import CommandError
    from django.db import DEFAULT_DB_ALIAS, connections

    from toolkit_batteries.db.rollback import rollback_migrations

    connection = connections[DEFAULT_DB_ALIAS]
    database = _database(connection)
    if _missing_sqlite_file(connection):
        out.line(f"nothing to roll back: {database} does not exist yet")
        return Result(data={"rolled_back": [], "database": database, "dry_run": dry_run})
    _django_executor(connection, database)  # reachable, or exit 5
    try:
        done = rollback_migrations(count, dry_run=dry_run, root=project.root, stdout=_stream(out))
    except CommandError as exc:
        raise CliError(str(exc), exit_code=getattr(exc, "returncode", 1) or 1) from None
    if dry_run:
        out.line(f"dry run: would unapply {len(done)} migration(s) on {database}")
        for name in done:
            out.line(f"  would unapply {name}")
    else:
        for name in done:
            out.line(f"  - {name}")
        out.line(f"rolled back {len(done)} migration(s) on {database}")
    return Result(data={"rolled_back": done, "database": database, "dry_run": dry_run})


# --------------------------------------------------------------------------- seed


def run_seed(args: argparse.Namespace, out: Output) -> Result:
    """Run every app's ``seeds.run()`` (or one app's), each in its own transaction."""
    project = require_project("db seed")
    setup_django(project)
    from toolkit_batteries.db.seeding import (
        NoSeedsError,
        SeedFailedError,
        find_seeds,
    )

    try:
        seeds = find_seeds(args.app, root=project.root)
    except LookupError as exc:
        raise UsageError(str(exc.args[0])) from None
    except NoSeedsError as exc:
        raise CliError(str(exc), hint="`toolkit generate seed` writes one") from None
    ran: list[str] = []
    try:
        _run_seeds(seeds, ran, out)
    except SeedFailedError as exc:
        raise CliError(str(exc), data={"ran": ran, "failed": exc.label}) from None
    out.line(f"✔ ran {len(ran)} seed module(s)")
    return Result(data={"ran": ran})


def _run_seeds(seeds: list[tuple[str, Any]], ran: list[str], out: Output) -> None:
    from toolkit_batteries.db.seeding import run_one

    for index, (label, function) in enumerate(seeds, start=1):
        out.progress(index - 1, len(seeds), f"seeding {label}")
        try:
            run_one(label, function)
        finally:
            if out.interactive:  # erase the progress line before the result prints
                out.stderr.write("\r\x1b[2K")
                out.stderr.flush()
        ran.append(label)
        out.line(f"✔ seeded {label}")
