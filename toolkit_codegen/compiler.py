"""The compiler's front door: load schema files, validate them, run backends.

Every stage collects diagnostics instead of raising, so one call reports every problem of
every file, sorted by file, line and column::

    res = load_paths(["schema/"])
    if not res.ok:
        print("\\n".join(map(str, res.diagnostics)))
    out = compile_schema(res, ["openapi", "sql"])
    out.files  # {"openapi/openapi.json": "...", "sql/postgres/schema.sql": "..."}

Nothing here writes a file: callers (the CLI, ``manage.py compile_schema``) write
``out.files`` in one step at the end, so ``--dry-run`` is the same code minus the write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from .escaping import is_python_identifier, json_string
from .grammar import ParsedFile, parse_file, sort_diagnostics
from .nodes import Diagnostic, Module, Position, Schema, SourceFile

if TYPE_CHECKING:
    from .backends import BackendOptions

__all__ = [
    "SCHEMA_SUFFIX",
    "CompileOutput",
    "LoadResult",
    "check_paths",
    "check_sources",
    "compile_schema",
    "discover",
    "load_paths",
    "load_sources",
    "module_of_path",
]

#: The extension of schema files.
SCHEMA_SUFFIX = ".toolkit"
_VERSION = re.compile(r"v[0-9]+")
#: The directory name that marks a schema root when a single file is given.
SCHEMA_DIR = "schema"
#: The largest schema file the compiler reads (a 500-entity schema is about 100 KB), so
#: a huge or hostile file costs a diagnostic, not the machine's memory.
MAX_SCHEMA_BYTES = 2 * 1024 * 1024
_TOO_BIG = f"file is larger than the {MAX_SCHEMA_BYTES // (1024 * 1024)} MiB limit for schema files"


@dataclass(frozen=True)
class LoadResult:
    """A validated schema and every diagnostic found while loading it."""

    #: The schema, names resolved; present even when there are errors (best effort).
    schema: Schema
    #: Every diagnostic (errors and warnings), sorted by file, line and column.
    diagnostics: tuple[Diagnostic, ...] = ()
    #: The files read, as displayed in diagnostics, in compile order.
    paths: tuple[str, ...] = ()
    #: The parse of each file (comments, text), by displayed path.
    parsed: Mapping[str, ParsedFile] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """Return True when no diagnostic is an error (warnings do not fail)."""
        return not self.errors

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Return the error-severity diagnostics."""
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """Return the warning-severity diagnostics."""
        return tuple(d for d in self.diagnostics if d.severity == "warning")

    @property
    def failed_files(self) -> tuple[str, ...]:
        """Return the files that have at least one error, sorted."""
        return tuple(sorted({d.pos.file for d in self.errors}))


@dataclass(frozen=True)
class CompileOutput:
    """The files of a compile (``<backend>/<path>`` -> text) and its diagnostics."""

    files: dict[str, str]
    diagnostics: tuple[Diagnostic, ...] = ()
    #: The backends that ran, in order.
    backends: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Return True when no diagnostic is an error."""
        return not any(d.severity == "error" for d in self.diagnostics)


def module_of_path(relative: str) -> tuple[str, str]:
    """Return ``(version, module)`` for a path relative to the schema root.

    ``app.toolkit`` -> ``("", "")``; ``billing/x.toolkit`` -> ``("", "billing")``;
    ``v1/iam/x.toolkit`` -> ``("v1", "iam")``; ``v1/x.toolkit`` -> ``("v1", "")``. Only
    the directory right under the root (or under the version) counts.
    """
    parts = [p for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    dirs = parts[:-1]
    version = ""
    if dirs and _VERSION.fullmatch(dirs[0]):
        version, dirs = dirs[0], dirs[1:]
    return version, dirs[0] if dirs else ""


def load_sources(sources: Mapping[str, str]) -> LoadResult:
    """Parse and validate in-memory files keyed by their path relative to the schema root."""
    return _load([(path, path, text) for path, text in sources.items()], [])


def check_sources(sources: Mapping[str, str]) -> LoadResult:
    """Resolve in-memory files without running a backend (the ``check`` command)."""
    return load_sources(sources)


def discover(
    paths: Iterable[str | PathLike[str]],
) -> tuple[list[tuple[str, str, Path]], list[Diagnostic]]:
    """Find schema files: ``(displayed path, path relative to the schema root, file)``.

    A directory is searched recursively for ``*.toolkit`` files and is their schema root.
    A single file's root is its nearest ancestor directory called ``schema`` (so
    ``schema/billing/x.toolkit`` stays in module ``billing``), else its own directory.
    """
    found: dict[str, tuple[str, str, Path]] = {}
    problems: list[Diagnostic] = []
    for raw in paths:
        path = Path(raw)
        shown = str(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob(f"*{SCHEMA_SUFFIX}") if p.is_file())
            if not files:
                problems.append(
                    Diagnostic(Position(shown, 1, 1), "load", f"no *{SCHEMA_SUFFIX} files found")
                )
            for f in files:
                rel = f.relative_to(path).as_posix()
                display = (Path(shown) / rel).as_posix() if shown not in ("", ".") else rel
                found.setdefault(str(f.resolve()), (display, rel, f))
        elif path.is_file():
            root = next((p for p in path.resolve().parents if p.name == SCHEMA_DIR), None)
            resolved = path.resolve()
            rel = resolved.relative_to(root).as_posix() if root else path.name
            found.setdefault(str(resolved), (Path(shown).as_posix(), rel, path))
        else:
            problems.append(Diagnostic(Position(shown, 1, 1), "load", "no such file or directory"))
    return sorted(found.values(), key=lambda e: (e[1], e[0])), problems


def load_paths(paths: Iterable[str | PathLike[str]]) -> LoadResult:
    """Read ``*.toolkit`` files and directories (recursive, sorted) and validate them."""
    files, problems = discover(paths)
    entries: list[tuple[str, str, str]] = []
    for display, rel, path in files:
        try:
            if path.stat().st_size > MAX_SCHEMA_BYTES:
                problems.append(Diagnostic(Position(display, 1, 1), "load", _TOO_BIG))
                continue
            data = path.read_bytes()
        except OSError as exc:
            problems.append(
                Diagnostic(Position(display, 1, 1), "load", f"cannot read file: {exc.strerror}")
            )
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            problems.append(
                Diagnostic(Position(display, line, 1), "lex", "file is not valid UTF-8 text")
            )
            continue
        entries.append((display, rel, text))
    return _load(entries, problems)


def check_paths(paths: Iterable[str | PathLike[str]]) -> LoadResult:
    """Resolve schema files without running a backend (the ``check`` command)."""
    return load_paths(paths)


def _load(entries: Sequence[tuple[str, str, str]], problems: list[Diagnostic]) -> LoadResult:
    """Parse every entry, group files into modules, validate; never raises."""
    diagnostics = list(problems)
    parsed: dict[str, ParsedFile] = {}
    schema = Schema()
    try:
        fitting = [e for e in entries if len(e[2]) <= MAX_SCHEMA_BYTES]
        diagnostics += [
            Diagnostic(Position(e[0], 1, 1), "load", _TOO_BIG)
            for e in entries
            if len(e[2]) > MAX_SCHEMA_BYTES
        ]
        ordered = sorted(fitting, key=lambda e: (module_of_path(e[1]), e[1], e[0]))
        groups: dict[tuple[str, str], list[SourceFile]] = {}
        for display, rel, text in ordered:
            pf = parse_file(text, display)
            parsed[display] = pf
            diagnostics.extend(pf.diagnostics)
            groups.setdefault(module_of_path(rel), []).append(pf.source)
        modules = []
        for (version, name), sources in sorted(groups.items()):
            if name and not is_python_identifier(name):
                diagnostics.append(
                    Diagnostic(
                        Position(sources[0].path, 1, 1),
                        "resolve",
                        f"module directory {json_string(name)} is not an identifier: a module "
                        "name becomes Python and SQL names, so use letters, digits and '_' "
                        "(not first, and not a Python keyword); rename the directory",
                    )
                )
            elif name == "public":
                diagnostics.append(
                    Diagnostic(
                        Position(sources[0].path, 1, 1),
                        "resolve",
                        'module name "public" is reserved (it is the default database schema); '
                        "rename the directory",
                    )
                )
            modules.append(
                Module(
                    name=name,
                    version=version,
                    files=tuple(sources),
                    entities=tuple(x for s in sources for x in s.entities),
                    messages=tuple(x for s in sources for x in s.messages),
                    enums=tuple(x for s in sources for x in s.enums),
                    services=tuple(x for s in sources for x in s.services),
                    jobs=tuple(x for s in sources for x in s.jobs),
                    schedules=tuple(x for s in sources for x in s.schedules),
                    sagas=tuple(x for s in sources for x in s.sagas),
                )
            )
        schema = Schema(tuple(modules))
        from .validate import validate

        broken = {name for pf in parsed.values() for name in pf.broken_names}
        damaged = {pos for pf in parsed.values() for pos in pf.damaged}
        diagnostics.extend(validate(schema, broken, damaged))
    except Exception as exc:  # the compiler reports, it never crashes on input
        diagnostics.append(_internal(entries, exc))
    return LoadResult(
        schema=schema,
        diagnostics=tuple(sort_diagnostics(diagnostics)),
        paths=tuple(parsed),
        parsed=parsed,
    )


def _internal(entries: Sequence[tuple[str, str, str]], exc: BaseException) -> Diagnostic:
    where = Position(entries[0][0] if entries else "<schema>", 1, 1)
    return Diagnostic(
        where,
        "internal",
        f"internal compiler error ({type(exc).__name__}: {exc}); please report this schema",
    )


def compile_schema(
    result: LoadResult,
    backends: Sequence[str] = (),
    options: BackendOptions | None = None,
) -> CompileOutput:
    """Run backends over a loaded schema; files are keyed ``<backend>/<relative path>``.

    A schema with errors runs no backend (the output carries the load diagnostics). A
    backend's :class:`~toolkit_codegen.backends.BackendError` becomes diagnostics and
    its files are dropped. An empty ``backends`` means the default set; an unknown name
    raises :class:`~toolkit_codegen.backends.UnknownBackendError` (a usage error).
    """
    from .backends import BackendError, BackendOptions, generate, resolve_backends
    from .verify import verify_files

    names = resolve_backends(list(backends))
    opts = options if options is not None else BackendOptions()
    diagnostics = list(result.diagnostics)
    files: dict[str, str] = {}
    if not result.ok:
        return CompileOutput({}, tuple(diagnostics), names)
    for name in names:
        try:
            produced = generate(name, result.schema, opts)
        except BackendError as exc:
            diagnostics.extend(exc.diagnostics)
            continue
        except Exception as exc:  # a backend bug must not become a traceback for the user
            where = result.schema.modules[0].files[0].path if result.schema.modules else "<schema>"
            diagnostics.append(
                Diagnostic(
                    Position(where, 1, 1),
                    name,
                    f"internal error in the {name} backend ({type(exc).__name__}: {exc})",
                )
            )
            continue
        broken = verify_files(produced, result.schema, name)
        if broken:  # a file that would not load is a compiler bug, and nothing is written
            diagnostics.extend(broken)
            continue
        for rel, text in sorted(produced.items()):
            files[f"{name}/{rel}"] = text
    return CompileOutput(files, tuple(sort_diagnostics(diagnostics)), names)
