"""Behaviour check of ``workflow``; every ID is in docs/batteries/workflow.md, "Checks".

Shape rules are declared on the options. Here: ``E003``, ``table`` against the table the
models were migrated with. Messages name fields, never values; nothing connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core import checks

from toolkit_batteries.core.checks import error, resolved_instances

from .tables import IDENTIFIER

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]


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
                error(
                    "toolkit_workflow.E003",
                    f'{where}: option "table" is not a plain SQL identifier or differs from '
                    "the migrated runs table",
                    "set table once, on the default instance, before the first migrate "
                    "(letters, digits and _); other instances leave it empty",
                )
            )
    return found
