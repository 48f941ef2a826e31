"""The relay's claim reads the pending rows only, however many sent rows the table keeps.

Why: sent rows stay for ``retention``; a claim that walked the primary key stepped over
every one of them (issue 27: an empty claim read 24,006 buffers after 20,000 sends).
Each test fills the table with 20,000 sent rows ahead of 2,000 pending ones, then reads
the plan of the adapter's own claim statement: PostgreSQL's ``EXPLAIN (ANALYZE,
BUFFERS)`` (run in a transaction rolled back) and SQLite's ``EXPLAIN QUERY PLAN``. The
claim must seek the partial index ``toolkit_outbox_pending`` and, on PostgreSQL, read
buffers in proportion to the batch, not to the sent rows. Buffer counts, not wall clock.
"""

from __future__ import annotations

from tests.batteries.outbox.conftest import seed

SENT = 20_000
PENDING = 2_000
BATCH = 100


def _mark_sent(database, count: int) -> None:
    """Settle the first ``count`` rows the way the relay does (status and sent time)."""
    database.execute(
        "UPDATE toolkit_outbox_message SET status = 'sent', sent_at = created_at "
        "WHERE id IN (SELECT id FROM toolkit_outbox_message ORDER BY id LIMIT %s)",
        (count,),
    )


def _nodes(node: dict) -> list[dict]:
    """Flatten a JSON plan into its nodes, outermost first."""
    found = [node]
    for child in node.get("Plans", []):
        found += _nodes(child)
    return found


def _claim_args(outbox, now: float) -> tuple[str, tuple]:
    sql = outbox._claim_sql[False].replace("{extra}", "")
    return sql, outbox._claim_params("plan-test", BATCH, now, 30)


class TestClaimPlan:
    def test_postgres_claims_through_the_pending_index_in_batch_sized_reads(
        self, make_outbox, postgres_dsn
    ):
        opened = make_outbox("db-postgres")
        outbox = opened.outbox
        database = outbox.database
        start = opened.clock()
        seed(postgres_dsn, SENT + PENDING, start=start)
        _mark_sent(database, SENT)
        first_pending = database.fetch_value(
            "SELECT min(id) FROM toolkit_outbox_message WHERE status = 'pending'"
        )
        database.execute("ANALYZE toolkit_outbox_message")
        sql, params = _claim_args(outbox, start)
        from django.db import transaction

        with transaction.atomic(using=database.alias):
            (plan,) = database.fetch_value("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
            transaction.set_rollback(True, using=database.alias)
        nodes = _nodes(plan["Plan"])
        scans = [n for n in nodes if n.get("Relation Name") == "toolkit_outbox_message"]
        claim_scan = next(n for n in nodes if n["Node Type"] == "LockRows")["Plans"][0]
        assert claim_scan.get("Index Name") == "toolkit_outbox_pending", claim_scan
        assert claim_scan["Actual Rows"] == BATCH
        # No sent row is read and dropped by a filter; the scan reads one to three pages
        # per claimed row (index leaf, heap, a lock), not the 20,000 sent rows' (13,000 to
        # 29,000 buffers through the primary key before the index).
        assert claim_scan.get("Rows Removed by Filter", 0) == 0
        read = claim_scan["Shared Hit Blocks"] + claim_scan["Shared Read Blocks"]
        assert read <= 5 * BATCH, read
        assert all(n["Node Type"] != "Seq Scan" for n in scans)
        # The claim still takes the oldest pending rows, in publish order.
        got: list = []
        outbox.relay(publish=got.append, batch_size=BATCH).run_once()
        assert [record.row for record in got] == list(range(first_pending, first_pending + BATCH))

    def test_sqlite_claims_through_the_pending_index_without_a_scan(self, make_outbox):
        opened = make_outbox("db-sqlite")
        outbox = opened.outbox
        database = outbox.database
        start = opened.clock()
        database.execute(
            "INSERT INTO toolkit_outbox_message (message_id, topic, key, payload, headers, "
            "status, attempts, created_at, available_at, locked_until, locked_by, last_error) "
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %s) "
            "SELECT lower(hex(randomblob(16))), 'seeded', '', CAST('{}' AS BLOB), '{}', "
            "'pending', 0, %s, %s, 0, '', '' FROM n",
            (SENT + PENDING, start, start - 1),
        )
        _mark_sent(database, SENT)
        database.execute("ANALYZE")
        sql, params = _claim_args(outbox, start)
        plan = [str(row[-1]) for row in database.fetch_all("EXPLAIN QUERY PLAN " + sql, params)]
        reads = [line for line in plan if "toolkit_outbox_message" in line]
        assert any("INDEX toolkit_outbox_pending" in line for line in reads), plan
        # A SCAN of the partial index walks pending rows only; a bare SCAN is the table.
        assert "SCAN toolkit_outbox_message" not in plan, plan
        assert not any("TEMP B-TREE" in line for line in plan), plan
        got: list = []
        outbox.relay(publish=got.append, batch_size=BATCH).run_once()
        assert [record.row for record in got] == list(range(SENT + 1, SENT + 1 + BATCH))


def test_postgres_takes_the_batch_once_whatever_join_the_planner_picks(make_outbox, postgres_dsn):
    """The batch is a MATERIALIZED CTE: taken once, never re-run per joined row.

    As a subquery of ``UPDATE ... FROM`` it could sit on the inner side of a nested loop
    and run again for every outer row, each run locking up to ``LIMIT`` more rows (the
    full suite saw a batch of 2 lease 5). With hash and merge joins off the planner has
    only nested loops left; the claim must still take exactly the batch.
    """
    opened = make_outbox("db-postgres")
    outbox = opened.outbox
    database = outbox.database
    start = opened.clock()
    seed(postgres_dsn, 40, start=start)
    database.execute("ANALYZE toolkit_outbox_message")
    sql, params = (
        outbox._claim_sql[False].replace("{extra}", ""),
        outbox._claim_params("plan-test", 2, start, 30),
    )
    from django.db import transaction

    with transaction.atomic(using=database.alias):
        database.execute("SET LOCAL enable_hashjoin = off")
        database.execute("SET LOCAL enable_mergejoin = off")
        (plan,) = database.fetch_value("EXPLAIN (FORMAT JSON) " + sql, params)
        claimed = database.fetch_all(sql, params)
        transaction.set_rollback(True, using=database.alias)
    batch = [n for n in _nodes(plan["Plan"]) if n.get("Subplan Name") == "CTE c"]
    assert len(batch) == 1 and batch[0]["Node Type"] == "Limit", plan
    assert len(claimed) == 2
