"""Unapply the newest N migrations of the project's own apps.

Shared by ``manage.py db_rollback`` and ``toolkit db rollback`` (which call this module,
never each other). "Newest" is the order of ``django_migrations.applied`` (then its id),
across the project's own apps (those whose code lives under ``BASE_DIR``); each step runs
``migrate <app> <previous>`` (``zero`` for an app's first migration), so Django unapplies
anything that depends on it too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

EXIT_USAGE = 2

__all__ = ["add_count_flag", "project_app_labels", "rollback_migrations"]


def add_count_flag(parser: Any, *, help: str = "how many (>= 1)") -> None:
    """Add ``-n`` (shared by ``manage.py db_rollback`` and ``toolkit db rollback``).

    ``toolkit db rollback`` also reverses statements (``--dsn``), so it words the help.
    """
    parser.add_argument("-n", dest="count", type=int, default=1, help=help)


def project_app_labels(root: Path | None = None) -> list[str]:
    """Return the labels of installed apps whose code lives under ``root`` (``BASE_DIR``)."""
    from django.apps import apps
    from django.conf import settings

    base = Path(root or getattr(settings, "BASE_DIR", None) or Path.cwd()).resolve()
    labels = []
    for config in apps.get_app_configs():
        if config.name.startswith(("django.", "toolkit_batteries")):
            continue
        path = Path(config.path).resolve()
        if _installed(path):
            continue
        if path == base or base in path.parents:
            labels.append(config.label)
    return labels


def _installed(path: Path) -> bool:
    """Tell whether ``path`` is an installed distribution (a venv inside the project)."""
    return any(part in ("site-packages", "dist-packages") for part in path.parts)


def _previous(graph: Any, app: str, name: str) -> str:
    node = graph.node_map[(app, name)]
    parents = sorted(parent.key[1] for parent in node.parents if parent.key[0] == app)
    return parents[-1] if parents else "zero"


def rollback_migrations(
    count: int,
    *,
    dry_run: bool = False,
    root: Path | None = None,
    stdout: TextIO | None = None,
    database: str = "default",
) -> list[str]:
    """Unapply the newest ``count`` applied migrations of the project's apps.

    Return the ``app.name`` of every migration that was (or, dry-running, would be)
    unapplied, newest first.
    """
    from django.core.management import call_command
    from django.core.management.base import CommandError
    from django.db import connections
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.recorder import MigrationRecorder

    if count < 1:
        raise CommandError(f"-n must be at least 1 (got {count})", returncode=EXIT_USAGE)
    connection = connections[database]
    labels = project_app_labels(root)
    recorder = MigrationRecorder(connection)
    if not recorder.has_table():
        return []
    newest = list(recorder.migration_qs.filter(app__in=labels).order_by("-applied", "-id")[:count])
    chosen = [(row.app, row.name) for row in newest]
    if dry_run:
        return [f"{app}.{name}" for app, name in chosen]
    before = set(recorder.applied_migrations())
    for app, name in chosen:
        if (app, name) not in recorder.applied_migrations():
            continue  # already unapplied as a dependant of an earlier step
        graph = MigrationLoader(connection, ignore_no_migrations=True).graph
        target = _previous(graph, app, name)
        call_command("migrate", app, target, "--no-input", database=database, stdout=stdout)
    after = set(recorder.applied_migrations())
    undone = before - after
    order = {key: index for index, key in enumerate(chosen)}
    return [
        f"{app}.{name}"
        for app, name in sorted(undone, key=lambda key: (order.get(key, len(order)), key))
    ]
