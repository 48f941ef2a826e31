"""Options of the ``workflow`` service (durable workflow runs)."""

from __future__ import annotations

from toolkit_batteries.core.option_kinds import matches, sql_target, warn_when_set
from toolkit_batteries.core.options import option, options_class

__all__ = ["WorkflowOptions"]


@options_class
class WorkflowOptions:
    """Options of ``workflow``; adapters ``memory`` (default), ``db`` and ``sqlserver``.

    With ``db`` an empty DSN selects the embedded file database, a server URL the SQL server.
    """

    __checks__ = (
        sql_target("toolkit_workflow.E002", adapters=("db", "sqlserver")).on("dsn"),
        matches(
            "toolkit_workflow.E004",
            r"(?s).{0,64}",
            "is longer than 64 characters",
            hint="use a shorter namespace",
        ).on("namespace"),
        warn_when_set(
            "toolkit_workflow.W001",
            "is set but the {adapter} adapter keeps runs itself; it is ignored",
            hint="leave host_port empty",
        ).on("host_port"),
    )

    host_port: str = option("", doc="workflow server address")
    namespace: str = option("", doc="workflow namespace")
    dsn: str = option("", doc="SQL connection string")
    table: str = option("", doc="workflow-runs table name")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
