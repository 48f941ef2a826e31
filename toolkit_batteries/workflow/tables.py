"""The names of the workflow tables, from the ``table`` option.

Django models have fixed table names, read once when the models load; so the ``table``
option of the ``default`` workflow instance (``settings.TOOLKIT`` plus the
environment's ``WORKFLOW__DEFAULT__TABLE``) names the runs table for the whole project,
and the migration reads the same function, so ``manage.py migrate`` creates the tables
under those names. Empty means ``toolkit_workflow_run`` (steps in
``toolkit_workflow_step``, signals in ``toolkit_workflow_signal``); a name ``wf`` gives
``wf``, ``wf_step`` and ``wf_signal``. Set it before the first ``migrate``: renaming
later needs a migration of your own (``ALTER TABLE``). Every instance must agree
(check ``toolkit_workflow.E003``).
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_RUNS", "IDENTIFIER", "configured_table", "signal_table", "step_table"]

DEFAULT_RUNS = "toolkit_workflow_run"
#: What a table option may be: a plain SQL identifier (no quoting, no schema).
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,50}$")


def configured_table() -> str:
    """Return the runs table the settings name (the default when unset or invalid).

    The models call this when Django loads them. Without a ``workflow`` entry in
    ``TOOLKIT`` and without ``WORKFLOW__...`` variables there is nothing to read, and
    loading the whole configuration (every battery's options) would cost ``django.setup()``
    tens of milliseconds, so the default is returned at once.
    """
    if not _configured():
        return DEFAULT_RUNS
    try:
        from toolkit_batteries.core.config import Config

        options = Config.of(None).service("workflow", "default").options
        name = str(getattr(options, "table", "") or "").strip()
    except Exception:  # a broken configuration is reported by the checks, not at import
        return DEFAULT_RUNS
    return name if IDENTIFIER.match(name) else DEFAULT_RUNS


def _configured() -> bool:
    """Whether the settings or the environment say anything about ``workflow``."""
    import os

    from django.conf import settings

    toolkit = getattr(settings, "TOOLKIT", None) if settings.configured else None
    if isinstance(toolkit, dict) and any(str(key).strip().lower() == "workflow" for key in toolkit):
        return True
    return any(key.upper().startswith("WORKFLOW__") for key in os.environ)


def step_table(runs: str | None = None) -> str:
    """Return the steps table that goes with runs table ``runs``."""
    runs = runs or configured_table()
    return "toolkit_workflow_step" if runs == DEFAULT_RUNS else f"{runs}_step"


def signal_table(runs: str | None = None) -> str:
    """Return the signals table that goes with runs table ``runs``."""
    runs = runs or configured_table()
    return "toolkit_workflow_signal" if runs == DEFAULT_RUNS else f"{runs}_signal"
