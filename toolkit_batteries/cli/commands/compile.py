"""``toolkit compile``: run the schema compiler's backends and write what they produce.

Two modes, so the common case needs no arguments:

- inside a project, with no ``--backend``, ``--out`` or PATH: compile the project's
  ``schema/`` into its API app exactly as ``manage.py compile_schema`` does (same plan:
  ``generated/`` rewritten, the next migration, ``handlers.py`` stubs appended);
- otherwise: compile the given schema with the chosen backends into ``--out``, one
  sub-directory per backend (``generated/openapi/openapi.json``). Output is deterministic;
  a file whose bytes did not change is not rewritten, and files that belong to the user
  (``mcp/handlers.py``) or must never change once written (migrations) are created once
  and then kept. The ``migrations`` backend reads the migrations already in ``--out``, so
  a recompile writes only the next one, as ``makemigrations`` would.

Everything is compiled in memory first: a schema or backend error writes nothing.
"""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path
from typing import Any

from toolkit_batteries.cli.output import InvalidInputError, Output, Result, UsageError
from toolkit_batteries.cli.parser import CommandParser, add_dry_run
from toolkit_batteries.cli.paths import inside
from toolkit_batteries.cli.project import Project
from toolkit_batteries.cli.schema_files import (
    add_schema_arguments,
    fail_on_errors,
    load_schema,
    report,
    shown_path,
)
from toolkit_batteries.core.files import atomic_write

DESCRIPTION = """\
Compile schema files with the compiler's backends.

Inside a project with no --backend, --out or PATH, this is `manage.py compile_schema`:
the project's schema/ is compiled into its API app (api/generated/, the next migration,
handler stubs), printing each file it creates or updates.

Otherwise the backends' files are written under --out (default ./generated), one
directory per backend. Backends: models, migrations, serializers, views, urls (together:
django), sql, openapi, mcp. Default: django, sql and openapi (mcp is opt-in).
mcp/handlers.py is yours and is never overwritten; existing migrations are never
rewritten (a recompile writes only the next migration).
"""
EPILOG = """\
examples:
  toolkit compile                                   # inside a project
  toolkit compile --backend openapi,sql --out build schema/
  toolkit compile --backend mcp --dry-run schema/app.toolkit
"""
BREADCRUMBS = ["toolkit check", "toolkit explain", "toolkit extract"]

DEFAULT_OUT = "generated"
#: Files a backend writes once for the user to edit: never overwritten afterwards.
USER_OWNED = frozenset({"mcp/handlers.py"})
#: Files that must never change once written (an applied migration is history).
WRITE_ONCE_PREFIXES = ("migrations/migrations/",)


def configure(parser: CommandParser) -> None:
    """Add ``--backend``, ``--out``, ``--dry-run`` and the schema paths."""
    parser.add_argument(
        "--backend",
        action="append",
        metavar="LIST",
        help="comma-separated backends (repeatable): models, migrations, serializers, views, "
        "urls, django (those five), sql, openapi, mcp; default: django, sql, openapi",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help=f"output directory, one sub-directory per backend (default: ./{DEFAULT_OUT}; "
        "inside a project without flags the project's API app)",
    )
    add_dry_run(parser)
    add_schema_arguments(parser)


def run(args: Namespace, out: Output) -> Result:
    """Compile into the project's app, or into ``--out``."""
    if args.backend is None and args.out is None and not args.files:
        from toolkit_batteries.cli.project import find_project

        project = find_project()
        if project is not None:
            return _compile_project(project, out, dry_run=args.dry_run)
    return _compile_out(args, out)


def _compile_project(project: Project, out: Output, *, dry_run: bool) -> Result:
    """Compile the project's ``schema/`` into its API app, as ``manage.py compile_schema``."""
    from toolkit_batteries.cli.project import setup_django
    from toolkit_batteries.cli.schema_files import resolve_paths

    setup_django(project)
    from django.apps import apps
    from django.conf import settings

    from toolkit_batteries.api_runtime.project import display_path, plan
    from toolkit_batteries.api_runtime.settings import codegen_app_label
    from toolkit_codegen.backends import DJANGO_BACKENDS

    label = codegen_app_label()
    try:
        app = apps.get_app_config(label)
    except LookupError:
        raise InvalidInputError(
            f'no installed app with label "{label}" to compile into',
            hint="add it to INSTALLED_APPS, or set TOOLKIT_CODEGEN_APP",
        ) from None
    base_dir = Path(getattr(settings, "BASE_DIR", project.root))
    schema_dir = base_dir / "schema"
    resolve_paths([], out)  # reports discovery; no files -> exit 2
    result = plan(schema_dir, Path(app.path), app.label, app.name, base_dir=base_dir)
    report(result.diagnostics, out)
    fail_on_errors(result.diagnostics)
    changes = result.writes
    inputs = sum(1 for _ in schema_dir.rglob("*.toolkit"))
    app_shown = display_path(Path(app.path), base_dir)
    every = sorted(display_path(c.path, base_dir) for c in result.changes)
    verb = "would " if dry_run else ""
    for change in changes:
        out.line(f"{verb}{change.action} {display_path(change.path, base_dir)}")
    if dry_run:
        out.line(f"dry run: {len(changes)} file(s) would change, nothing written")
    else:
        result.write()
        if not changes:
            out.line("nothing to change")
        out.line(
            f"✔ compiled {inputs} file(s) → {app_shown} ({len(every)} outputs, "
            f"backends: {', '.join(DJANGO_BACKENDS)})"
        )
    migrated = any(c.is_migration for c in changes)
    data = {
        "files": inputs,
        "backends": list(DJANGO_BACKENDS),
        "outDir": app_shown,
        "outputs": {"django": every},
        "total": len(every),
        "changes": [{"path": display_path(c.path, base_dir), "action": c.action} for c in changes],
        "dryRun": dry_run,
    }
    hint = "apply it with `toolkit db migrate`" if migrated and not dry_run else None
    return Result(data=data, hint=hint)


def _backend_names(raw: list[str] | None) -> tuple[str, ...]:
    from toolkit_codegen.backends import UnknownBackendError, resolve_backends

    names = [name for item in raw or () for name in item.split(",") if name.strip()]
    try:
        return resolve_backends(names)
    except UnknownBackendError as exc:
        raise UsageError(str(exc), hint="run `toolkit compile --help` for the backends") from None


def _existing_migrations(out_dir: Path) -> dict[str, str]:
    folder = out_dir / "migrations" / "migrations"
    if not folder.is_dir():
        return {}
    return {
        p.name: p.read_text(encoding="utf-8")
        for p in sorted(folder.glob("*.py"))
        if p.name != "__init__.py"
    }


def _compile_out(args: Namespace, out: Output) -> Result:
    from toolkit_codegen.backends import BackendOptions
    from toolkit_codegen.compiler import compile_schema

    names = _backend_names(args.backend)
    out_dir = Path(args.out or DEFAULT_OUT)
    if out_dir.exists() and not out_dir.is_dir():
        raise InvalidInputError(f"--out {str(out_dir)!r} exists and is not a directory")
    result = load_schema(args.files, out)
    existing = _existing_migrations(out_dir) if "migrations" in names else {}
    options = BackendOptions(existing_migrations=existing)
    seen = set(result.diagnostics)
    problems = []
    files: dict[str, str] = {}
    for index, name in enumerate(names):
        out.progress(index, len(names), f"backend {name}")
        produced = compile_schema(result, [name], options)
        problems.extend(d for d in produced.diagnostics if d not in seen)
        files.update(produced.files)
    out.progress(len(names), len(names), "compiled")
    report(problems, out)
    fail_on_errors(problems)

    changes = _plan(out_dir, files)
    shown_out = shown_path(out_dir)
    outputs: dict[str, list[str]] = {name: [] for name in names}
    for key in files:
        backend, _, rel = key.partition("/")
        outputs.setdefault(backend, []).append(rel)
    for listed in outputs.values():
        listed.sort()
    written = [c for c in changes if c["action"] in ("create", "update")]
    kept = [c for c in changes if c["action"] == "kept"]
    if args.dry_run:
        for change in written:
            out.line(f"would write {change['shown']}")
        for change in kept:
            out.line(f"would keep {change['shown']} (exists; never overwritten)")
        out.line(f"dry run: {len(written)} file(s) would be written, nothing written")
    else:
        for index, change in enumerate(written, 1):
            out.progress(index, len(written), change["path"])
            atomic_write(change["target"], change["text"])
        for change in kept:
            if change["differs"]:
                out.line(f"kept {change['shown']} (yours; the compiled version differs)")
        out.line(
            f"✔ compiled {len(result.paths)} file(s) → {shown_out} "
            f"({len(files)} outputs, backends: {', '.join(names)})"
        )
    data: dict[str, Any] = {
        "files": len(result.paths),
        "backends": list(names),
        "outDir": shown_out,
        "outputs": outputs,
        "total": len(files),
        "changes": [{"path": c["path"], "action": c["action"]} for c in changes],
        "dryRun": bool(args.dry_run),
    }
    return Result(data=data)


def _plan(out_dir: Path, files: dict[str, str]) -> list[dict[str, Any]]:
    """Decide per file: ``create``, ``update``, ``unchanged`` or ``kept`` (never rewritten)."""
    changes = []
    for key, text in sorted(files.items()):
        target = inside(out_dir, key)
        if not target.exists():
            action = "create"
        elif key in USER_OWNED or key.startswith(WRITE_ONCE_PREFIXES):
            action = "kept"
        elif target.read_bytes() == text.encode("utf-8"):
            action = "unchanged"
        else:
            action = "update"
        differs = action == "kept" and target.read_bytes() != text.encode("utf-8")
        changes.append(
            {
                "differs": differs,
                "path": key,
                "target": target,
                "text": text,
                "action": action,
                "shown": shown_path(target),
            }
        )
    return changes
