"""``Database.fetch_all_with_settings``: server settings for one query, in one round trip.

On the real PostgreSQL server: the settings hold while the query runs (the query reads
them back), are gone after it, go out with the query before a single ``Sync`` (counted in
libpq's protocol trace) outside a transaction, and inside an ``atomic`` block last until
that transaction ends, as ``SET LOCAL`` does.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import transaction

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from ...support.libpq_trace import round_trips, sent_messages
from .conftest import db_settings

SHOW = "SELECT current_setting('work_mem'), current_setting('statement_timeout')"


@pytest.fixture
def db(postgres_dsn, tmp_path) -> Iterator[object]:
    container = Container(Config.load(db_settings("sqlserver", tmp_path, postgres_dsn), {}))
    try:
        yield container.db()
    finally:
        container.close()


def test_the_settings_hold_for_the_query_and_end_with_it(db):
    before = db.fetch_one(SHOW)
    rows = db.fetch_all_with_settings({"work_mem": "7MB", "statement_timeout": "4321"}, SHOW)
    assert rows == [("7MB", "4321ms")]
    assert db.fetch_one(SHOW) == before != ("7MB", "4321ms")


def test_outside_a_transaction_it_is_one_round_trip(db):
    db.fetch_value("SELECT 1")  # connected
    rows: list = []
    sent = sent_messages(
        db.django_connection,
        lambda: rows.extend(db.fetch_all_with_settings({"work_mem": "9MB"}, SHOW)),
    )
    assert rows[0][0] == "9MB"
    assert round_trips(sent) == 1, sent  # no BEGIN or COMMIT: one Sync after both statements
    kinds = [kind for kind, _ in sent]
    assert kinds.count("Execute") == 2 and kinds.index("Sync") > max(
        i for i, kind in enumerate(kinds) if kind == "Execute"
    )


def test_a_failing_query_leaves_the_connection_usable_and_unchanged(db):
    from django.db import DatabaseError

    before = db.fetch_one(SHOW)
    with pytest.raises(DatabaseError):
        db.fetch_all_with_settings({"work_mem": "7MB"}, "SELECT 1 / 0")
    assert db.fetch_one(SHOW) == before
    with pytest.raises(DatabaseError):
        db.fetch_all_with_settings({"work_mem": "not a size"}, SHOW)
    assert db.fetch_all_with_settings({"work_mem": "5MB"}, SHOW)[0][0] == "5MB"


def test_inside_an_atomic_block_they_last_until_the_transaction_ends(db):
    before = db.fetch_one(SHOW)
    with transaction.atomic(using=db.alias):
        assert db.fetch_all_with_settings({"work_mem": "6MB"}, SHOW)[0][0] == "6MB"
        assert db.fetch_one(SHOW)[0] == "6MB"
    assert db.fetch_one(SHOW) == before
