"""System checks of the ``workflow`` battery (``manage.py check``).

Shape rules are declared on the options and reported by the core check
(:mod:`toolkit_batteries.core.option_kinds`) after ``E001`` (the adapter resolves):

* ``toolkit_workflow.E002``: ``db`` / ``sqlserver`` with a ``dsn`` that is not a SQL target.
* ``toolkit_workflow.E003``: ``table`` is not a plain SQL identifier, or differs from
  the table the models were loaded with (every instance shares the migrated tables).
* ``toolkit_workflow.E004``: ``namespace`` is longer than 64 characters.
* ``toolkit_workflow.W001``: ``host_port`` is set; no adapter here talks to a workflow
  server, so it is ignored.

Messages name instances and fields, never values. Nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import resolved_instances

from .tables import IDENTIFIER

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check that every ``workflow`` instance's table is the migrated runs table."""
    from .models import WorkflowRun

    migrated = WorkflowRun._meta.db_table
    found: list[checks.CheckMessage] = []
    for cfg, _ in resolved_instances(config, "workflow"):
        where, options = f"workflow.{cfg.instance}", cfg.options
        table = str(options.table or "").strip()
        if table and (not IDENTIFIER.match(table) or table != migrated):
            found.append(
                checks.Error(
                    f'{where}: option "table" is not a plain SQL identifier or differs from '
                    "the migrated runs table",
                    hint="set table once, on the default instance, before the first migrate "
                    "(letters, digits and _); other instances leave it empty",
                    obj=_OBJ,
                    id="toolkit_workflow.E003",
                )
            )
    return found
