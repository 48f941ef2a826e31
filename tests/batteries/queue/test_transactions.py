"""A push joins the caller's ``transaction.atomic()``: rolled back with it, or delivered.

The outbox pattern: the application writes its rows and pushes the message that
announces them in one transaction, so a failure leaves neither behind. Run on SQLite and
on the real PostgreSQL, with the queue's own ``dsn`` naming the project's database and
with an empty ``dsn`` (borrowing the ``db`` service): both must land on the alias the
caller's ``atomic`` uses.
"""

from __future__ import annotations

import dataclasses

import pytest
from django.db import transaction

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .conftest import clear_queue_tables


class Boom(Exception):
    """The caller's failure after the push."""


@pytest.fixture(params=["sqlite", "postgres"])
def project_db(request) -> dict:
    """Return the ``db`` service's settings block: a migrated SQLite file or PostgreSQL."""
    if request.param == "sqlite":
        return {"adapter": "sqlfile", "options": {"path": request.getfixturevalue("sqlite_dsn")}}
    dsn = request.getfixturevalue("postgres_dsn")
    clear_queue_tables(dsn)
    request.addfinalizer(lambda: clear_queue_tables(dsn))
    return {"adapter": "sqlserver", "options": {"dsn": dsn}}


@pytest.fixture(params=["own-dsn", "borrowed"])
def opened(request, project_db):
    """Return (container, queue) with the queue on the project's database."""
    if request.param == "own-dsn":
        target = project_db["options"].get("dsn") or project_db["options"]["path"]
        queue_block = {"adapter": "db", "options": {"dsn": target}}
    else:
        queue_block = {"adapter": "db"}
    container = Container(Config.load({"db": project_db, "queue": queue_block}, {}))
    yield container, container.queue()
    container.close()


def test_the_queue_writes_through_the_project_databases_alias(opened):
    container, queue = opened
    assert queue.database.alias == container.db().alias


def test_a_push_in_a_transaction_that_raises_is_gone(opened):
    container, queue = opened
    db = container.db()
    with pytest.raises(Boom), transaction.atomic(using=db.alias):
        queue.push("orders", b"announce order 1")
        queue.push_many("orders", [b"a", b"b"])
        assert queue.size("orders") == 3  # visible inside the transaction
        raise Boom
    assert queue.size("orders") == 0
    assert queue.pop("orders", timeout=0) is None
    assert db.fetch_value("SELECT count(*) FROM toolkit_queue_message") == 0


def test_a_push_in_a_committed_transaction_is_delivered(opened):
    container, queue = opened
    with transaction.atomic(using=container.db().alias):
        pushed = queue.push("orders", b"announce order 2")
    message = queue.pop("orders", timeout=0)
    assert message is not None and message.id == pushed and message.body == b"announce order 2"
    assert queue.ack(message)


def test_a_push_in_an_inner_block_that_raises_is_gone_but_the_outer_commits(opened):
    container, queue = opened
    alias = container.db().alias
    with transaction.atomic(using=alias):
        queue.push("orders", b"kept")
        with pytest.raises(Boom), transaction.atomic(using=alias):
            queue.push("orders", b"rolled back to the savepoint")
            raise Boom
    assert queue.pop("orders", timeout=0).body == b"kept"
    assert queue.pop("orders", timeout=0) is None


def test_an_ack_in_a_transaction_that_raises_leaves_the_message_in_flight(opened):
    container, queue = opened
    queue.push("orders", b"x")
    message = queue.pop("orders", timeout=0)
    with pytest.raises(Boom), transaction.atomic(using=container.db().alias):
        assert queue.ack(message)
        raise Boom
    assert queue.ack(message)  # the lease is still held: the first ack never happened


@pytest.mark.parametrize("rows", [1, 0])
def test_a_push_and_an_ack_carried_by_another_statement_follow_its_source(opened, rows):
    """``push_from`` / ``ack_from``: one message pushed, and the delivery acknowledged,
    per row of the carrying statement's source (a workflow step's move), in its
    transaction; no row, no push and no ack."""
    container, queue = opened
    db = container.db()
    queue.push("orders", b"x")
    message = queue.pop("orders", timeout=0)
    source = f"WITH src AS (SELECT 1 AS one WHERE {rows} = 1) "
    with transaction.atomic(using=db.alias):
        push, params = queue.push_from("src", "next", b"the next job")
        assert len(db.fetch_all(source + push, params)) == rows
        ack, lease = queue.ack_from(message, "src")
        assert len(db.fetch_all(source + ack, lease)) == rows
    queue.notify_pushed()
    assert queue.size("next") == rows
    if rows:
        assert queue.pop("next", timeout=0).body == b"the next job"
    assert queue.ack(message) is (rows == 0)  # acked by the statement, or still leased
    stranger = dataclasses.replace(message, id="not a row id")
    assert queue.ack_from(stranger, "src") is None  # names no row: left to the worker
