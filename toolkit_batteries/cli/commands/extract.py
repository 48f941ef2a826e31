"""``toolkit extract <module>``: one schema module as a standalone project.

In the schema language the directory is the module, so module ``billing`` is exactly the
files under ``schema/billing/`` (and ``schema/v<N>/billing/``). ``extract`` checks the
whole schema, checks the module compiles on its own (it must not use declarations of
other modules), renders a new project from the template (as ``toolkit new``), copies the
module's files byte-for-byte into its ``schema/`` (same relative paths, so the module
keeps its name and database schema), drops the template's sample schema and handlers, and
compiles the module into the new project's ``api`` app. Everything happens in a staging
directory first; the target gets files only when every step succeeded.
"""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

from ..output import CliError, InvalidInputError, Output, Result
from ..parser import CommandParser, add_dry_run

DESCRIPTION = """\
Extract a schema module into its own project: a new project (as `toolkit new`) whose
schema is the module's .toolkit files, copied byte-for-byte, compiled into its api app.
The root module (schema/app.toolkit) cannot be extracted, and a module that uses
declarations of another module cannot either (move them into the module first)."""

EPILOG = """\
example:
  toolkit extract billing --out ../billing-service"""

BREADCRUMBS = ["toolkit compile", "toolkit check"]


def configure(parser: CommandParser) -> None:
    """Add the module argument and ``--out``, ``--force``, ``--dry-run``."""
    parser.add_argument("module", help="the schema module (a directory under schema/)")
    parser.add_argument("--out", help="directory of the new project (default: ./<module>-service)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty directory (the project's files are overwritten)",
    )
    add_dry_run(parser)


def run(args: Namespace, out: Output) -> Result:
    """Check, stage, compile, then copy the new project into ``--out``."""
    import tempfile

    from toolkit_codegen.compiler import load_sources

    from ..paths import check_name
    from ..project import require_project
    from ..scaffold.names import check_package
    from ..scaffold.render import check_target, deliver, list_files, render_project
    from ..scaffold.schema_edit import ROOT_MODULE_NAMES, check_module_name

    module = check_name(args.module, "module name")
    if module in ROOT_MODULE_NAMES:
        raise InvalidInputError(
            "the root module (schema/app.toolkit) cannot be extracted; "
            "move its declarations into a module directory (schema/<module>/) first"
        )
    check_module_name(module)
    project = require_project("extract")
    files = _module_files(project.schema_dir, module, out)
    sources = {rel: path.read_text(encoding="utf-8") for rel, path in files}
    alone = load_sources(sources)
    if not alone.ok:
        for diagnostic in alone.diagnostics:
            out.err(f"schema/{diagnostic}")
        raise InvalidInputError(
            f"module {module!r} does not compile on its own (it uses declarations of other "
            "modules); move them into the module first, nothing was written",
            data={"diagnostics": [f"schema/{d}" for d in alone.diagnostics]},
        )
    name = f"{module}-service"
    package = check_package(name)
    target = Path(args.out) if args.out else Path(name)
    shown = args.out or f"./{name}"
    check_target(target, shown, args.force)
    with tempfile.TemporaryDirectory(prefix="toolkit-extract-") as temp:
        staging = Path(temp) / "project"
        staging.mkdir()
        render_project(package, staging)
        (staging / "schema" / "app.toolkit").unlink()
        # The template's handlers serve its sample schema; the compile writes new stubs.
        (staging / "api" / "handlers.py").unlink()
        for rel, path in files:
            destination = staging / "schema" / rel
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(path.read_bytes())
        _compile(staging)
        written = list_files(staging)
        where = str(target.resolve())
        data = {
            "module": module,
            "out": where,
            "package": package,
            "schema": [f"schema/{rel}" for rel, _ in files],
            "files": written,
            "dryRun": args.dry_run,
        }
        entities = [e.name for e in alone.schema.entities]
        services = [s.name for s in alone.schema.services]
        summary = (
            f"project {name} (package {package}) in {where} from module {module}: "
            f"{len(files)} schema file(s), entities: {', '.join(entities) or 'none'}, "
            f"services: {', '.join(services) or 'none'}"
        )
        deliver(staging, target, written, summary, out, dry_run=args.dry_run)
    if args.dry_run:
        return Result(data=data)
    out.line("next steps:")
    out.line(f"  cd {shown}")
    out.line("  toolkit db migrate")
    out.line("  toolkit serve")
    if services:
        out.line(
            f"  move the business logic of {', '.join(services)} from this project's "
            f"handlers into {shown}/api/handlers.py"
        )
    return Result(data=data)


def _module_files(schema_dir: Path, module: str, out: Output) -> list[tuple[str, Path]]:
    """Compile-check the whole schema; return ``module``'s files (relative path, file)."""
    import os

    from toolkit_codegen.compiler import discover, load_paths, module_of_path

    if not schema_dir.is_dir():
        raise InvalidInputError("this project has no schema/ directory")
    # Diagnostics name files relative to the current directory, as `toolkit check` does.
    shown = os.path.relpath(schema_dir)
    result = load_paths([shown])
    if not result.ok:
        for diagnostic in result.diagnostics:
            out.err(str(diagnostic))
        raise InvalidInputError(
            f"the schema has {len(result.errors)} error(s); fix them before extracting",
            data={"diagnostics": [str(d) for d in result.diagnostics]},
        )
    found, _ = discover([shown])
    files = [(rel, path) for _, rel, path in found if module_of_path(rel)[1] == module]
    if not files:
        modules = sorted({m.name for m in result.schema.modules if m.name})
        raise InvalidInputError(
            f"no module {module!r} in schema/ (modules: {', '.join(modules) or 'none'})"
        )
    return files


def _compile(root: Path) -> None:
    """Run the new project's ``manage.py compile_schema`` with this interpreter."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        [sys.executable, "manage.py", "compile_schema"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise CliError(
            "compiling the module into the new project failed: "
            + (lines[-1] if lines else f"exit status {proc.returncode}")
        )
