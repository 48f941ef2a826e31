"""Options of the ``idempotency`` service (reserve-then-commit request records)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBlock, kvserver_block
from toolkit_batteries.core.option_kinds import (
    kv_address,
    non_negative,
    sql_target,
)
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["IdempotencyOptions"]


@options_class
class IdempotencyOptions:
    """Options of ``idempotency``; adapters ``memory`` (default), ``kvserver``, ``db``."""

    __checks__ = (
        kv_address(
            "toolkit_idempotency.E002",
            block="kvserver",
            adapters=("kvserver",),
            hint="use host:port or a redis:// / rediss:// URL in kvserver.addr; "
            "kvserver.require_tls needs kvserver.tls or a rediss:// URL",
        ),
        sql_target("toolkit_idempotency.E003", adapters=("db",)).on("dsn"),
        non_negative("toolkit_idempotency.E004").on("ttl", "max_entries"),
    )

    ttl: Duration = option(timedelta(hours=24), doc="default reservation lifetime")
    dsn: str = option("", doc="SQL connection string or file path (db)")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    kvserver: KVServerBlock = kvserver_block(
        "toolkit_idempotency.W001", hint="set kvserver.addr (it also accepts a redis:// URL)"
    )
    max_entries: int = option(1000, doc="records kept before least-recently-used eviction (memory)")
