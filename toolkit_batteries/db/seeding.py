"""Find and run every app's ``seeds.run()``.

Shared by ``manage.py db_seed`` and ``toolkit db seed`` (which call this module, never
each other). The contract with ``toolkit generate seed``: an installed app may have a
``seeds`` module (``<app>/seeds.py`` or a ``seeds`` package) with a ``run()`` function
taking no arguments. Apps are visited project apps first (code under ``BASE_DIR``), then
the others, each in ``INSTALLED_APPS`` order; ``django.*`` and ``toolkit_batteries.*``
are skipped. Each ``run()`` runs inside ``transaction.atomic()``, so a failing seed leaves
nothing behind. No seeds at all is an error: a seed step that silently does nothing
hides a missing file.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import NoSeedsError, SeedFailedError

EXIT_RUNTIME = 1
EXIT_USAGE = 2

__all__ = ["NoSeedsError", "SeedFailedError", "add_seed_flags", "find_seeds", "run_one"]


def add_seed_flags(parser: Any) -> None:
    """Add ``--app`` (shared by ``manage.py db_seed`` and ``toolkit db seed``)."""
    parser.add_argument("--app", default=None, help="seed only this app (its label)")


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def find_seeds(
    app_label: str | None = None, *, root: Path | None = None
) -> list[tuple[str, Callable[[], Any]]]:
    """Return ``(label, run)`` for every app with a seeds module, project apps first.

    Raise ``LookupError`` for an unknown ``app_label`` and :class:`NoSeedsError` when no
    seeds module is found.
    """
    from django.apps import apps
    from django.conf import settings

    configs = list(apps.get_app_configs())
    if app_label is not None:
        configs = [apps.get_app_config(app_label)]  # LookupError names the label
    base = Path(root or getattr(settings, "BASE_DIR", None) or Path.cwd()).resolve()

    def in_project(config: Any) -> bool:
        path = Path(config.path).resolve()
        if any(part in ("site-packages", "dist-packages") for part in path.parts):
            return False
        return path == base or base in path.parents

    ordered = [c for c in configs if in_project(c)] + [c for c in configs if not in_project(c)]
    found: list[tuple[str, Callable[[], Any]]] = []
    for config in ordered:
        if app_label is None and config.name.startswith(("django.", "toolkit_batteries")):
            continue
        module_name = f"{config.name}.seeds"
        if not _has_module(module_name):
            continue
        run = getattr(importlib.import_module(module_name), "run", None)
        if callable(run):
            found.append((config.label, run))
    if not found:
        where = f"app {app_label!r}" if app_label else "any installed app"
        raise NoSeedsError(f"no seeds module with a run() function in {where}")
    return found


def run_one(label: str, run: Callable[[], Any]) -> None:
    """Run one app's seed inside ``transaction.atomic()``."""
    from django.db import transaction

    from toolkit_batteries.core.redaction import redact_string

    try:
        with transaction.atomic():
            run()
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        raise SeedFailedError(
            label,
            f"seeds of {label} failed and were rolled back: "
            f"{type(exc).__name__}: {redact_string(first)}",
        ) from exc
