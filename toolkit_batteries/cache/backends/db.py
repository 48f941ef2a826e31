"""``DBCache``: the db adapter as a ``CACHES`` backend; ``LOCATION`` is the table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit_batteries.core.errors import InvalidOptionsError
from toolkit_batteries.core.pools import SQLPoolSettings

from ..adapters import db as db_adapter
from ..sql import valid_identifier
from .common import INSTANCE, decode_options, pools

__all__ = ["DBCache"]


class DBCache(db_adapter.DBCache):
    """The db adapter as a ``CACHES`` backend; ``LOCATION`` is the table."""

    def __init__(self, table: str, params: Mapping[str, Any]) -> None:
        """Use ``OPTIONS["dsn"]``, or the project's ``db`` service when it is empty."""
        options = decode_options("db", params)
        table = str(table or "").strip() or db_adapter.DBCache.table
        if not valid_identifier(table):
            raise InvalidOptionsError(
                "cache",
                "LOCATION",
                "must be the table name, a lower-case SQL identifier",
                instance=INSTANCE,
            )
        dsn = options.dsn.strip()
        if dsn:
            from toolkit_batteries.db import Database

            pool = pools().sql(
                "cache",
                dsn,
                SQLPoolSettings(),
                instance=INSTANCE,
                dedicated=bool(options.dedicated_pool),
            )
            database: Any = Database(pool, instance=INSTANCE)
            database.service_name = "cache"
        else:
            from toolkit_batteries import services

            database = services.db
        super().__init__(
            database,
            params,
            table=table,
            instance=INSTANCE,
            purge_interval=options.sweep_interval.total_seconds(),
        )

    def close(self, **kwargs: Any) -> None:
        """Keep the database: Django calls this after every request."""
