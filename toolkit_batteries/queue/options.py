"""Options of the ``queue`` service (message queue with visibility timeouts)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBasic
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["QueueOptions"]


@options_class
class QueueOptions(KVServerBasic):
    """Options of ``queue``; adapters ``memory`` (default), ``kvserver`` and ``db``.

    Inherits the five basic key-value server keys flat (addr, password, db, tls, require_tls).
    """

    visibility_timeout: Duration = option(
        timedelta(seconds=30), doc="time a popped message stays invisible before reclaim"
    )
    poll_timeout: Duration = option(
        timedelta(seconds=5), doc="time pop waits for a message before returning empty"
    )
    buffer: int = option(10000, doc="max buffered ready messages per topic (memory)")
    url: str = option("", doc="key-value server URL; takes precedence over addr")
    prefix: str = option("", doc="key prefix")
    dsn: str = option("", doc="SQL connection string or file path")
    table: str = option("", doc="queue-messages table name")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
