"""Options of the ``queue`` service (message queue with visibility timeouts)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBasic
from toolkit_batteries.core.option_kinds import opens, sql_target
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["QueueOptions"]


_DSN_HINT = (
    "give a postgres:// URL, a libpq string or a SQLite file path; "
    "leave it empty to use the db service"
)


@options_class
class QueueOptions(KVServerBasic):
    """Options of ``queue``; adapters ``memory`` (default), ``kvserver``, ``db`` and ``sqs``.

    Inherits the five basic key-value server keys flat (addr, password, db, tls, require_tls).
    """

    __checks__ = (
        opens(
            "toolkit_queue.E002",
            "toolkit_batteries.queue.adapters.db:check_table_name",
            adapters=("db",),
            hint="leave table empty: the db queue uses its migrated tables",
        ).on("table"),
        sql_target("toolkit_queue.E003", adapters=("db",), hint=_DSN_HINT).on("dsn"),
    )

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
    endpoint: str = option("", doc="SQS endpoint URL (sqs); empty = AWS's for the region")
    region: str = option("us-east-1", doc="AWS region (sqs)")
    access_key_id: str = option("", doc="access key id (sqs; an identifier, not a secret)")
    secret_access_key: str = option("", secret=True, doc="secret access key (sqs)")
