"""Schema arguments shared by the inspection commands: find, load and report ``.toolkit`` files.

Every schema command (``compile``, ``check``, ``fmt``, ``routes``, ``explain``, ``graph``)
takes the same positional arguments: schema files or directories (searched recursively for
``*.toolkit``). With none, it uses the project's ``schema/`` directory when run inside a
project, else ``./schema``, and says so on stderr (``discovered 3 file(s) under
schema/``), so a run never silently compiles something other than what the user thinks.

Diagnostics are printed the one way every command prints them, ``file:line:col: [phase]
message`` on stderr, and a schema with errors fails with exit 3 and, under ``--json``, the
diagnostics as objects in the envelope's ``data.diagnostics``.

The compiler (``toolkit_codegen``, which imports pyparsing) is imported inside the
functions, so a command module importing this one stays cheap for ``--help``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .output import InvalidInputError, Output, UsageError

if TYPE_CHECKING:
    from toolkit_codegen.compiler import LoadResult
    from toolkit_codegen.nodes import Diagnostic, Module, Rpc, Schema, Service

__all__ = [
    "ROOT_LABEL",
    "add_schema_arguments",
    "default_schema_dir",
    "diagnostic_data",
    "fail_on_errors",
    "iter_rpcs",
    "load_schema",
    "module_label",
    "report",
    "resolve_paths",
    "schema_file_list",
    "shown_path",
]

SUFFIX = ".toolkit"
#: How the implicit module (files right under ``schema/``) is printed.
ROOT_LABEL = "(root)"


def add_schema_arguments(parser: Any, *, what: str = "schema files or directories") -> None:
    """Add the shared ``files`` positional (zero or more files or directories)."""
    parser.add_argument(
        "files",
        nargs="*",
        metavar="PATH",
        help=f"{what} (*.toolkit, directories searched recursively; default: the "
        "project's schema/ directory, else ./schema)",
    )


def default_schema_dir() -> Path:
    """Return the project's ``schema/`` inside a project, else ``./schema``."""
    from .project import find_project

    project = find_project()
    return project.schema_dir if project is not None else Path.cwd() / "schema"


def shown_path(path: Path) -> str:
    """Return ``path`` relative to the current directory (as the user would type it)."""
    try:
        rel = os.path.relpath(path, Path.cwd())
    except ValueError:  # another drive (Windows)
        return str(path)
    return Path(rel).as_posix()


def _toolkit_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.rglob(f"*{SUFFIX}") if p.is_file())


def resolve_paths(paths: Sequence[str], out: Output) -> list[str]:
    """Return the schema paths a command works on: ``paths``, or the discovered default.

    Raises :class:`UsageError` (exit 2) when no argument is given and nothing is found.
    """
    if paths:
        return list(paths)
    directory = default_schema_dir()
    found = _toolkit_files(directory)
    shown = shown_path(directory)
    if not found:
        raise UsageError(
            f"no input {SUFFIX} files given",
            hint=f"pass schema files or directories, or add {shown}/app{SUFFIX}",
        )
    if not out.json_mode:
        out.err(f"discovered {len(found)} file(s) under {shown}/")
    return [shown]


def schema_file_list(paths: Sequence[str], out: Output) -> list[tuple[str, Path]]:
    """Return ``(displayed path, file)`` for every schema file the arguments name, sorted.

    Used by commands that work file by file (``fmt``); a missing path fails with its
    diagnostic (exit 3).
    """
    from toolkit_codegen.compiler import discover

    files, problems = discover(resolve_paths(paths, out))
    if problems:
        report(problems, out)
        fail_on_errors(problems)
    return [(display, path) for display, _rel, path in files]


def load_schema(paths: Sequence[str], out: Output, *, strict: bool = True) -> LoadResult:
    """Resolve the arguments, load and validate the schema, print its diagnostics.

    With ``strict`` (the default) a schema with errors raises :class:`InvalidInputError`;
    otherwise the caller gets the best-effort result and decides (``graph`` draws first).
    """
    from toolkit_codegen.compiler import load_paths

    result = load_paths(resolve_paths(paths, out))
    report(result.diagnostics, out)
    if strict:
        fail_on_errors(result.diagnostics)
    return result


def report(diagnostics: Iterable[Diagnostic], out: Output) -> None:
    """Print each diagnostic on stderr as ``file:line:col: [phase] message``."""
    for diagnostic in diagnostics:
        out.err(str(diagnostic))


def diagnostic_data(diagnostic: Diagnostic) -> dict[str, Any]:
    """Return one diagnostic as the envelope's object."""
    return {
        "file": diagnostic.pos.file,
        "line": diagnostic.pos.line,
        "column": diagnostic.pos.col,
        "severity": diagnostic.severity,
        "phase": diagnostic.phase,
        "message": diagnostic.message,
    }


def fail_on_errors(diagnostics: Sequence[Diagnostic], **data: Any) -> None:
    """Raise exit 3 ``N file(s) failed to compile`` when any diagnostic is an error."""
    errors = [d for d in diagnostics if d.severity == "error"]
    if not errors:
        return
    failed = len({d.pos.file for d in errors})
    raise InvalidInputError(
        f"{failed} file(s) failed to compile",
        data={**data, "diagnostics": [diagnostic_data(d) for d in diagnostics]},
    )


def module_label(module: Module) -> str:
    """Return the module as commands print it: ``(root)``, ``billing``, ``v1/iam``."""
    name = module.name or ROOT_LABEL
    return f"{module.version}/{name}" if module.version else name


def iter_rpcs(schema: Schema) -> Iterator[tuple[Module, Service, Rpc]]:
    """Yield every rpc with its module and service, in declaration order."""
    for module in schema.modules:
        for service in module.services:
            for rpc in service.rpcs:
                yield module, service, rpc
