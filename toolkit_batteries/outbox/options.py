"""Options of the ``outbox`` service (transactional outbox and inbox)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import RetryPolicy
from toolkit_batteries.core.option_kinds import matches, opens, required, sql_target
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["OutboxOptions"]


_TABLES_HINT = 'leave table "outbox" and inbox_table "inbox"'
_DSN_HINT = (
    "give a postgres:// URL, a libpq string or a SQLite file path; "
    "leave it empty to use the db service"
)


@options_class
class OutboxOptions:
    """Options of ``outbox``; adapters ``db`` (default), ``memory`` and ``cdc``.

    ``db`` relays by polling; ``cdc`` captures through SQL-server logical replication.
    """

    __checks__ = (
        opens("toolkit_outbox.E002", "toolkit_batteries.outbox.base:settings_from_options"),
        opens(
            "toolkit_outbox.E003",
            "toolkit_batteries.outbox.adapters.db:check_tables",
            unless=("memory",),
            hint=_TABLES_HINT,
        ),
        sql_target("toolkit_outbox.E004", unless=("memory",), hint=_DSN_HINT).on("dsn"),
        matches(
            "toolkit_outbox.E005",
            r"[A-Za-z_][A-Za-z0-9_]{0,62}",
            "must be a SQL identifier",
            adapters=("cdc",),
        ).on("slot", "publication"),
        required("toolkit_outbox.E005", "must not be empty", adapters=("cdc",)).on("prefix"),
    )

    dsn: str = option("", doc="SQL connection string or file path (db)")
    table: str = option("outbox", doc="outbox table name")
    inbox_table: str = option("inbox", doc="inbox table name")
    publisher: str = option(
        "", choices=("eventbus", "queue"), doc="transport the relay publishes through"
    )
    poll_interval: Duration = option(timedelta(seconds=1), doc="relay poll cadence")
    batch_size: int = option(100, doc="messages claimed per poll")
    max_attempts: int = option(5, doc="publish attempt cap")
    retention: Duration = option(timedelta(hours=168), doc="how long processed messages are kept")
    lock_seconds: int = option(30, doc="claim lease in seconds")
    notify_channel: str = option("", doc="LISTEN/NOTIFY channel (cdc)")
    prefix: str = option("toolkit_outbox", doc="logical-replication message prefix (cdc)")
    slot: str = option("toolkit_outbox_slot", doc="replication slot name (cdc)")
    publication: str = option("toolkit_outbox_pub", doc="publication name (cdc)")
    dedicated_pool: bool = option(False, doc="open a private pool instead of sharing by DSN")
    retry: RetryPolicy | None = option(None, doc="backoff policy; unset until a key is given")
