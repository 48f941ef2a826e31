"""Options of the ``session`` service (server-side sessions)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBlock, kvserver_block
from toolkit_batteries.core.option_kinds import kv_address, sql_target
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["SessionOptions"]


@options_class
class SessionOptions:
    """Options of ``session``; adapters ``memory`` (default), ``kvserver`` and ``db``."""

    __checks__ = (
        kv_address(
            "toolkit_session.E002",
            block="kvserver",
            adapters=("kvserver",),
            hint="set kvserver.addr to host:port or a redis:// URL",
        ),
        sql_target(
            "toolkit_session.E003",
            adapters=("db",),
            hint="use a postgres:// URL or a SQLite file path, or leave dsn empty "
            "to borrow the db service",
        ).on("dsn"),
    )

    ttl: Duration = option(timedelta(minutes=15), doc="default session lifetime")
    dsn: str = option("", doc="SQL connection string or file path (db)")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    kvserver: KVServerBlock = kvserver_block()
