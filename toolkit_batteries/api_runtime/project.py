"""Compile a schema directory into a Django app: plan every file, then write them at once.

:func:`plan` runs the schema compiler's five Django backends and decides what each file
of the app becomes; nothing is written until :meth:`Plan.write`, so a dry run is the same
plan unwritten, and a schema (or backend) error writes nothing at all. Files and their
rules (docs/compiler.md):

======================================  ==================================================
``<app>/generated/*.py``                rewritten on every compile ("do not edit")
``<app>/migrations/NNNN_*.py``          the next migration, when the models changed
``<app>/migrations/__init__.py``        created when missing
``<app>/models.py``                     created when missing (imports the generated models)
``<app>/handlers.py``                   created with stubs when missing; later compiles
                                        append stubs for new rpcs, never edit existing code
``<app>/jobs.py``                       the same, for the schema's jobs (when it has any)
``<app>/schedules.py``                  created when missing and the schema has schedules
``<app>/workflows.py``                  created when missing and the schema has sagas
======================================  ==================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolkit_batteries.core.files import atomic_write
from toolkit_codegen.backends import APP_BACKENDS, BackendError, BackendOptions, generate
from toolkit_codegen.backends.handler_stubs import (
    append_stubs,
    render_app_models,
    render_handlers,
)
from toolkit_codegen.backends.job_stubs import append_job_stubs, render_jobs
from toolkit_codegen.backends.schedules import render_app_schedules
from toolkit_codegen.backends.workflows import render_app_workflows
from toolkit_codegen.compiler import load_paths
from toolkit_codegen.drift import code_drift
from toolkit_codegen.nodes import Diagnostic, Position, Schema
from toolkit_codegen.verify import verify_files

__all__ = ["FileChange", "Plan", "display_path", "plan"]

Action = Literal["create", "update", "append", "unchanged"]


@dataclass(frozen=True)
class FileChange:
    """One file of the app and what the compile does to it."""

    path: Path
    text: str
    action: Action

    @property
    def is_migration(self) -> bool:
        """Whether this file is a migration module (callers then say: apply it)."""
        return self.path.parent.name == "migrations" and self.path.name != "__init__.py"


@dataclass
class Plan:
    """What a compile would write, or why it cannot."""

    app_dir: Path
    changes: list[FileChange] = field(default_factory=list)
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        """Return True when no diagnostic is an error."""
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def writes(self) -> list[FileChange]:
        """Return the changes that touch the disk (not ``unchanged``)."""
        return [c for c in self.changes if c.action != "unchanged"]

    def write(self) -> list[FileChange]:
        """Write every change (each file atomically); return what was written.

        Refuses to write a plan with errors, so a failed compile changes nothing.
        """
        if not self.ok:
            raise RuntimeError("a plan with errors cannot be written")
        for change in self.writes:
            link = escaping_link(self.app_dir, change.path)
            if link is not None:  # checked again: the tree may have changed since plan()
                raise RuntimeError(f"refusing to write through the symbolic link {link}")
            atomic_write(change.path, change.text)
        return self.writes


def display_path(path: Path, base_dir: Path) -> str:
    """Return ``path`` relative to the project root for messages, else as given."""
    try:
        return path.resolve().relative_to(base_dir.resolve()).as_posix()
    except ValueError:
        return str(path)


def plan(
    schema_dir: Path,
    app_dir: Path,
    app_label: str,
    app_module: str,
    base_dir: Path | None = None,
) -> Plan:
    """Return the plan of compiling ``schema_dir`` into the app at ``app_dir``.

    ``base_dir`` (the project root) only shortens the paths in diagnostics.
    """
    result = plan_paths([schema_dir], app_dir, app_label, app_module)
    if base_dir is not None:
        result.diagnostics = tuple(_relative(d, base_dir) for d in result.diagnostics)
    return result


def plan_paths(sources: Iterable[Path], app_dir: Path, app_label: str, app_module: str) -> Plan:
    """Like :func:`plan`, for any schema files and directories."""
    out = Plan(app_dir)
    loaded = load_paths([str(p) for p in sources])
    diagnostics = list(loaded.diagnostics)
    if not loaded.ok:
        out.diagnostics = tuple(sorted(diagnostics))
        return out
    migrations_dir = app_dir / "migrations"
    existing = {
        p.name: p.read_text(encoding="utf-8")
        for p in sorted(migrations_dir.glob("*.py"))
        if p.name != "__init__.py"
    }
    options = BackendOptions(app_label, app_module, existing)
    files: dict[str, str] = {}
    for backend in APP_BACKENDS:
        try:
            files.update(generate(backend, loaded.schema, options))
        except BackendError as exc:
            diagnostics.extend(exc.diagnostics)
        except Exception as exc:  # a backend bug must reach the user as a line, not a trace
            where = Position(loaded.paths[0] if loaded.paths else "schema", 1, 1)
            message = f"internal error in the {backend} backend ({type(exc).__name__}: {exc})"
            diagnostics.append(Diagnostic(where, backend, message))
    handlers = app_dir / "handlers.py"
    if handlers.exists():
        try:
            updated = append_stubs(
                loaded.schema, handlers.read_text(encoding="utf-8"), _display(handlers, app_dir)
            )
        except BackendError as exc:
            diagnostics.extend(exc.diagnostics)
            updated = None
        if updated is not None:
            out.changes.append(FileChange(handlers, updated, "append"))
    else:
        out.changes.append(
            FileChange(handlers, render_handlers(loaded.schema, app_label), "create")
        )
    _plan_jobs(loaded.schema, app_dir, app_label, out, diagnostics)
    diagnostics.extend(_drift(loaded.schema, app_dir, out))
    every = dict(files)
    every.update({_display(c.path, app_dir): c.text for c in out.changes})
    diagnostics.extend(verify_files(every, loaded.schema, "compile"))
    targets = [app_dir / rel for rel in files] + [c.path for c in out.changes]
    diagnostics.extend(_links(app_dir, targets))
    out.diagnostics = tuple(sorted(diagnostics))
    if not out.ok:
        out.changes = []
        return out
    for rel, text in sorted(files.items()):
        target = app_dir / rel
        if rel.startswith("migrations/") and target.exists():
            # Never rewrite a migration that exists (it may have been applied already).
            message = f"{rel} already exists; remove it or merge the migrations by hand"
            problem = Diagnostic(Position(_display(target, app_dir), 1, 1), "migrations", message)
            out.diagnostics = tuple(sorted([*out.diagnostics, problem]))
            out.changes = []
            return out
        out.changes.append(FileChange(target, text, _action(target, text)))
    for path, text in (
        (migrations_dir / "__init__.py", ""),
        (app_dir / "models.py", render_app_models(app_label)),
        *(
            [(app_dir / "schedules.py", render_app_schedules(app_label))]
            if loaded.schema.schedules
            else []
        ),
        *(
            [(app_dir / "workflows.py", render_app_workflows(app_label))]
            if loaded.schema.sagas
            else []
        ),
    ):
        if not path.exists():
            out.changes.append(FileChange(path, text, "create"))
    out.changes.sort(key=lambda c: str(c.path))
    return out


def escaping_link(app_dir: Path, path: Path) -> Path | None:
    """Return the symbolic link a write of ``path`` would pass through below ``app_dir``.

    Generated files are written only into real directories of the app: a symlinked
    ``generated/`` (or file) could point the compile at any file the user can write.
    """
    try:
        relative = path.relative_to(app_dir)
    except ValueError:
        return path
    current = app_dir
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def _links(app_dir: Path, targets: list[Path]) -> list[Diagnostic]:
    """Return one diagnostic per symbolic link the compile would write through."""
    links = sorted({link for t in targets if (link := escaping_link(app_dir, t)) is not None})
    return [
        Diagnostic(
            Position(_display(link, app_dir), 1, 1),
            "compile",
            "refusing to write through a symbolic link; replace it with a real directory "
            "(generated code is written only inside the app)",
        )
        for link in links
    ]


def _plan_jobs(
    schema: Schema, app_dir: Path, app_label: str, out: Plan, diagnostics: list[Diagnostic]
) -> None:
    """Create ``jobs.py`` with stubs, or append the stubs of new jobs (never edit)."""
    if not schema.jobs:
        return
    path = app_dir / "jobs.py"
    if not path.exists():
        out.changes.append(FileChange(path, render_jobs(schema, app_label), "create"))
        return
    try:
        updated = append_job_stubs(
            schema, path.read_text(encoding="utf-8"), _display(path, app_dir)
        )
    except BackendError as exc:
        diagnostics.extend(exc.diagnostics)
        return
    if updated is not None:
        out.changes.append(FileChange(path, updated, "append"))


def _drift(schema: Schema, app_dir: Path, out: Plan) -> list[Diagnostic]:
    """Warn about handlers and jobs the schema has moved away from (after the stubs)."""
    planned = {c.path: c.text for c in out.changes}

    def text_of(name: str) -> tuple[str, str] | None:
        path = app_dir / name
        if path in planned:
            return planned[path], _display(path, app_dir)
        if path.exists():
            return path.read_text(encoding="utf-8"), _display(path, app_dir)
        return None

    return code_drift(schema, text_of("handlers.py"), text_of("jobs.py"), severity="warning")


def _action(path: Path, text: str) -> Action:
    if not path.exists():
        return "create"
    return "unchanged" if path.read_text(encoding="utf-8") == text else "update"


def _display(path: Path, app_dir: Path) -> str:
    return f"{app_dir.name}/{path.relative_to(app_dir).as_posix()}"


def _relative(diagnostic: Diagnostic, base_dir: Path) -> Diagnostic:
    """Return the diagnostic with its file shown relative to the project when possible."""
    try:
        shown = Path(diagnostic.pos.file).resolve().relative_to(base_dir.resolve()).as_posix()
    except (ValueError, OSError):
        return diagnostic
    return dataclasses.replace(diagnostic, pos=dataclasses.replace(diagnostic.pos, file=shown))
