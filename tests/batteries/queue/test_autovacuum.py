"""The hot queue tables carry their autovacuum settings on PostgreSQL, and SQLite is untouched.

Why (issue 27): the claim indexes of ``toolkit_queue_message`` and
``toolkit_outbox_message`` fill with dead entries between vacuums, and PostgreSQL's
default trigger (a fifth of the table) fires late on a big backlog. The migrations set
:data:`~toolkit_batteries.core.autovacuum.HOT_QUEUE` on both tables through one shared
operation (:class:`~toolkit_batteries.core.autovacuum.SetAutovacuum`). These tests read
``pg_class.reloptions`` of the session's migrated database, migrate the queue app back
and forth (the reversal resets the table), and check that on SQLite the operation
writes no SQL at all.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connections

from toolkit_batteries.core.autovacuum import HOT_QUEUE, SetAutovacuum
from toolkit_batteries.core.slots import slot_alias

#: (app label, migration, table) of every migration that sets HOT_QUEUE.
HOT_TABLES = [
    ("toolkit_queue", "0002_message_autovacuum", "toolkit_queue_message"),
    ("toolkit_outbox", "0003_outboxmessage_autovacuum", "toolkit_outbox_message"),
]


def _alias(dsn: str, kind: str) -> str:
    from toolkit_batteries.db.databases import postgres_entry, sqlite_entry

    entry = postgres_entry(dsn) if kind == "postgresql" else sqlite_entry(dsn)
    return slot_alias(connections, entry, preferred="default", prefix="toolkit_db")


def _reloptions(alias: str, table: str) -> dict[str, float] | None:
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [table])
        (options,) = cursor.fetchone()
    if options is None:
        return None
    return {key: float(value) for key, value in (item.split("=", 1) for item in options)}


def _expected() -> dict[str, float]:
    return {name: float(value) for name, value in HOT_QUEUE.items()}


def test_hot_queue_triggers_on_a_fixed_count_not_a_fraction_of_the_table():
    # The point of the settings: no scale factor, so a 1M-row table vacuums as early as
    # a small one; a threshold that is a count of rows, in the thousands.
    assert HOT_QUEUE["autovacuum_vacuum_scale_factor"] == 0
    assert 1000 <= HOT_QUEUE["autovacuum_vacuum_threshold"] <= 20_000


@pytest.mark.parametrize(("app", "migration", "table"), HOT_TABLES)
def test_postgres_tables_carry_the_hot_queue_parameters(postgres_dsn, app, migration, table):
    alias = _alias(postgres_dsn, "postgresql")
    assert _reloptions(alias, table) == _expected()


def test_postgres_reversal_resets_the_table_and_reapplying_sets_it_again(postgres_dsn):
    alias = _alias(postgres_dsn, "postgresql")
    table = "toolkit_queue_message"
    try:
        call_command("migrate", "toolkit_queue", "0001", database=alias, verbosity=0)
        assert _reloptions(alias, table) is None
    finally:
        call_command("migrate", "toolkit_queue", database=alias, verbosity=0)
    assert _reloptions(alias, table) == _expected()


@pytest.mark.parametrize(("app", "migration", "table"), HOT_TABLES)
def test_postgres_sql_is_one_alter_table_set(postgres_dsn, app, migration, table):
    out = StringIO()
    alias = _alias(postgres_dsn, "postgresql")
    call_command("sqlmigrate", app, migration, database=alias, stdout=out)
    statements = [line for line in out.getvalue().splitlines() if line.startswith("ALTER")]
    assert statements == [
        f'ALTER TABLE "{table}" SET (autovacuum_vacuum_scale_factor = 0.0, '
        "autovacuum_vacuum_threshold = 5000);"
    ]
    back = StringIO()
    call_command("sqlmigrate", app, migration, backwards=True, database=alias, stdout=back)
    assert f'ALTER TABLE "{table}" RESET (autovacuum_vacuum_scale_factor' in back.getvalue()


@pytest.mark.parametrize(("app", "migration", "table"), HOT_TABLES)
def test_sqlite_gets_no_sql_either_way(sqlite_dsn, app, migration, table):
    alias = _alias(sqlite_dsn, "sqlite")
    for backwards in (False, True):
        out = StringIO()
        call_command("sqlmigrate", app, migration, backwards=backwards, database=alias, stdout=out)
        sql = [line for line in out.getvalue().splitlines() if line and not line.startswith("--")]
        assert sql in ([], ["BEGIN;", "COMMIT;"]), sql


def test_operation_round_trips_through_deconstruct():
    # squashmigrations and the migration writer rebuild the operation from this.
    custom = SetAutovacuum("message", {"autovacuum_vacuum_threshold": 100})
    for operation in (SetAutovacuum("message"), custom):
        name, args, kwargs = operation.deconstruct()
        assert name == "SetAutovacuum"
        rebuilt = SetAutovacuum(*args, **kwargs)
        assert (rebuilt.model_name, rebuilt.parameters) == (
            operation.model_name,
            operation.parameters,
        )
    assert SetAutovacuum("message").deconstruct()[2] == {}
