"""Options of the ``workflow`` service (durable workflow runs)."""

from __future__ import annotations

from toolkit_batteries.core.options import option, options_class

__all__ = ["WorkflowOptions"]


@options_class
class WorkflowOptions:
    """Options of ``workflow``; adapters ``memory`` (default), ``db`` and ``sqlserver``.

    With ``db`` an empty DSN selects the embedded file database, a server URL the SQL server.
    """

    host_port: str = option("", doc="workflow server address")
    namespace: str = option("", doc="workflow namespace")
    dsn: str = option("", doc="SQL connection string")
    table: str = option("", doc="workflow-runs table name")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
