"""Options of the ``db`` service (the SQL connection pool other services borrow)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["DBOptions"]


@options_class
class DBOptions:
    """Options of ``db``; adapters ``sqlfile`` (default) and ``sqlserver``."""

    dsn: str = option("", doc="SQL server connection string")
    max_conns: int = option(0, doc="pool size cap; 0 = the adapter's default")
    min_conns: int = option(0, doc="minimum pool size (server) or idle target (file)")
    max_conn_lifetime: Duration = option(timedelta(0), doc="maximum reuse time of a connection")
    max_conn_idle_time: Duration = option(timedelta(0), doc="maximum idle time of a connection")
    path: str = option("", doc="database file path (sqlfile)")
    dedicated_pool: bool = option(False, doc="opt out of pool sharing (ignored: db owns the pool)")
