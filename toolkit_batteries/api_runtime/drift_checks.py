"""``manage.py check``: the project's handlers and jobs still fit its schema.

The same analysis as ``toolkit compile`` (:mod:`toolkit_codegen.drift`), run on the
schema under ``<BASE_DIR>/schema`` and the compiled app's ``handlers.py`` and
``jobs.py``, so a drift made after the last compile (an edited handler, a pulled
schema) stops ``toolkit serve`` before a request meets it:

* ``toolkit_codegen_app.E010``: a handler method does not take an rpc parameter, or
  requires one the rpc does not pass (the view's call raises ``TypeError``);
* ``toolkit_codegen_app.E011``: a job function's parameters are not the declared job's
  (the worker's call raises ``TypeError``);
* ``toolkit_codegen_app.W010``: an rpc named like a CRUD rpc runs no CRUD default and
  its handler is still the stub (the route answers 501).

A schema that does not load is left to ``toolkit compile`` (no message here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core import checks

__all__ = ["drift_checks"]


def drift_checks(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Report handler and job drift of the project's codegen app."""
    from django.apps import apps
    from django.conf import settings

    from toolkit_codegen.compiler import load_paths
    from toolkit_codegen.drift import code_drift

    from .settings import codegen_app_label

    try:
        app = apps.get_app_config(codegen_app_label())
    except LookupError:
        return []
    base_dir = Path(getattr(settings, "BASE_DIR", "") or Path.cwd())
    schema_dir = base_dir / "schema"
    app_dir = Path(app.path)
    if not schema_dir.is_dir() or not any(schema_dir.rglob("*.toolkit")):
        return []
    loaded = load_paths([str(schema_dir)])
    if not loaded.ok:
        return []

    def read(name: str) -> tuple[str, str] | None:
        path = app_dir / name
        if not path.is_file():
            return None
        try:
            shown = path.resolve().relative_to(base_dir.resolve()).as_posix()
        except ValueError:
            shown = str(path)
        return path.read_text(encoding="utf-8"), shown

    found: list[checks.CheckMessage] = []
    for diagnostic in code_drift(loaded.schema, read("handlers.py"), read("jobs.py")):
        where = f"{diagnostic.pos.file}:{diagnostic.pos.line}"
        text = f"{where}: {diagnostic.message}"
        if diagnostic.severity == "warning":
            found.append(checks.Warning(text, obj=where, id="toolkit_codegen_app.W010"))
        elif diagnostic.pos.file.endswith("jobs.py"):
            found.append(checks.Error(text, obj=where, id="toolkit_codegen_app.E011"))
        else:
            found.append(checks.Error(text, obj=where, id="toolkit_codegen_app.E010"))
    return found
