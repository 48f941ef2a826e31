"""System checks of the ``workflow`` battery (``manage.py check``).

:class:`~toolkit_batteries.core.apps.BatteryConfig` runs :func:`battery_checks` after its
own ``toolkit_workflow.E001`` (each instance's adapter resolves):

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

from toolkit_batteries.core.checks import resolved_instances, sql_target_error

from .tables import IDENTIFIER

if TYPE_CHECKING:
    from toolkit_batteries.core.config import Config

__all__ = ["battery_checks"]

_OBJ = "settings.TOOLKIT"


def battery_checks(config: Config) -> list[checks.CheckMessage]:
    """Check every ``workflow`` instance's database target, table and server address."""
    from .models import WorkflowRun

    migrated = WorkflowRun._meta.db_table
    found: list[checks.CheckMessage] = []
    for cfg, adapter in resolved_instances(config, "workflow"):
        where, options = f"workflow.{cfg.instance}", cfg.options
        if adapter in ("db", "sqlserver") and (
            error := sql_target_error(
                where,
                options.dsn,
                hint="use a postgres:// URL, a libpq string or a SQLite file path",
                check_id="toolkit_workflow.E002",
            )
        ):
            found.append(error)
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
        if len(str(options.namespace or "").strip()) > 64:
            found.append(
                checks.Error(
                    f'{where}: option "namespace" is longer than 64 characters',
                    hint="use a shorter namespace",
                    obj=_OBJ,
                    id="toolkit_workflow.E004",
                )
            )
        if str(options.host_port or "").strip():
            found.append(
                checks.Warning(
                    f'{where}: option "host_port" is set but the {adapter} adapter keeps runs '
                    "itself; it is ignored",
                    hint="leave host_port empty",
                    obj=_OBJ,
                    id="toolkit_workflow.W001",
                )
            )
    return found
