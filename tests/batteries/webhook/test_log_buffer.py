"""The http adapter's deferred delivery log: batched rows, never lost on the paths we control.

A delivered first attempt's row waits in memory (``log_batch`` rows or ``log_interval``
seconds) and is written with one multi-row ``INSERT``; reads, close, failures and the
caller's transaction write at once. Rows are read straight from the table (not through
``delivery()``, which flushes) so the deferral itself is observed.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import pytest
from django.db import connections, transaction
from django.test.utils import CaptureQueriesContext

from toolkit_batteries.webhook.models import WebhookDelivery

from .conftest import SECRET

HTTP_VARIANTS = ("http-sqlite", "http-postgres")


@pytest.fixture(params=HTTP_VARIANTS)
def http_variant(request) -> str:
    return request.param


def stored(hook) -> set[str]:
    """Return the delivery ids in the table, read directly."""
    rows = WebhookDelivery.objects.using(hook.database.alias)
    return set(rows.values_list("delivery_id", flat=True))


def send(hook, receiver, n: int = 1, **kwargs) -> list[str]:
    return [
        hook.send(receiver.url(), {"n": i}, event="e", secret=SECRET, **kwargs).id for i in range(n)
    ]


def test_rows_wait_for_a_full_batch_and_are_written_in_one_statement(
    make_hook, receiver, http_variant
):
    hook = make_hook(http_variant).hook
    hook.configure(log_batch=5, log_interval=60)
    first = send(hook, receiver, 4)
    assert stored(hook) == set()  # sent (the receiver has them) but not yet written
    assert len(receiver.wait_for(4)) == 4
    with CaptureQueriesContext(connections[hook.database.alias]) as queries:
        fifth = send(hook, receiver, 1)
    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("INSERT")]
    assert len(inserts) == 1
    assert stored(hook) == set(first + fifth)
    row = WebhookDelivery.objects.using(hook.database.alias).get(delivery_id=first[0])
    assert (row.status, row.attempts, row.response_status) == ("succeeded", 1, 200)
    assert row.delivered_at is not None and row.body_size == len(b'{"n":0}')


def test_sends_cost_one_statement_per_batch_not_per_send(make_hook, receiver):
    hook = make_hook("http-sqlite").hook
    hook.configure(log_batch=10, log_interval=60)
    with CaptureQueriesContext(connections[hook.database.alias]) as queries:
        ids = send(hook, receiver, 20)
    assert len(queries.captured_queries) <= 2 * 3  # per batch: INSERT (+ savepoint pair)
    inserts = sum(q["sql"].startswith("INSERT") for q in queries.captured_queries)
    assert 1 < inserts <= 1_100 // 50  # chunks of many rows, within the parameter limit
    assert stored(hook) == set(ids)


def test_a_read_sees_the_callers_own_sends(make_hook, receiver):
    hook = make_hook("http-sqlite").hook
    hook.configure(log_batch=100, log_interval=60)
    (ident,) = send(hook, receiver)
    assert stored(hook) == set()
    assert hook.delivery(ident).status == "succeeded"  # the read wrote the waiting row
    assert stored(hook) == {ident}


def test_the_interval_writes_a_lone_row_without_another_send(make_hook, receiver):
    hook = make_hook("http-sqlite").hook
    hook.configure(log_batch=100, log_interval=0.1)
    (ident,) = send(hook, receiver)
    deadline = time.monotonic() + 10
    while ident not in stored(hook) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert stored(hook) == {ident}


def test_close_writes_what_waits(make_hook, receiver, http_variant):
    opened = make_hook(http_variant)
    opened.hook.configure(log_batch=100, log_interval=60)
    ids = send(opened.hook, receiver, 3)
    assert stored(opened.hook) == set()
    opened.hook.close()
    assert stored(opened.hook) == set(ids)


def test_a_failed_attempt_is_written_at_once(make_hook, receiver, http_variant):
    hook = make_hook(http_variant).hook
    hook.configure(log_batch=100, log_interval=60)
    receiver.script = [500]
    (failed,) = send(hook, receiver)
    assert stored(hook) == {failed}
    row = WebhookDelivery.objects.using(hook.database.alias).get(delivery_id=failed)
    assert (row.status, row.response_status) == ("failed", 500)


def test_inside_the_callers_transaction_the_row_commits_or_rolls_back_with_it(make_hook, receiver):
    hook = make_hook("http-sqlite").hook
    hook.configure(log_batch=100, log_interval=60)
    alias = hook.database.alias
    with transaction.atomic(using=alias):
        (kept,) = send(hook, receiver)
        assert kept in stored(hook)  # written in the transaction, not deferred
    with pytest.raises(RuntimeError), transaction.atomic(using=alias):
        (dropped,) = send(hook, receiver)
        raise RuntimeError("the caller's work failed")
    assert stored(hook) == {kept}
    assert dropped not in stored(hook)


def test_log_batch_one_writes_every_row_at_once(make_hook, receiver):
    hook = make_hook("http-sqlite").hook
    hook.configure(log_batch=1)
    ids = send(hook, receiver, 2)
    assert stored(hook) == set(ids)


def test_a_reused_delivery_id_costs_only_its_own_row(make_hook, receiver, caplog):
    hook = make_hook("http-sqlite").hook
    hook.configure(log_batch=3, log_interval=60)
    (first,) = send(hook, receiver, delivery_id="dup-1")
    hook.delivery(first)  # written
    with caplog.at_level(logging.ERROR, logger="toolkit.webhook"):
        ids = send(hook, receiver, 1, delivery_id="dup-1") + send(hook, receiver, 2)
    assert stored(hook) == {"dup-1", *ids[1:]}
    assert "dup-1 was sent but its log row was refused" in caplog.text
    assert SECRET not in caplog.text


@pytest.mark.parametrize(("field", "value"), [("log_batch", 0), ("log_interval", -1)])
def test_bad_log_settings_are_refused_naming_the_field(make_hook, field, value):
    hook = make_hook("http-sqlite").hook
    with pytest.raises(ValueError, match=field):
        hook.configure(**{field: value})


def test_a_batched_row_holds_the_send_instant_in_every_time_column(
    make_hook, receiver, http_variant
):
    """The rows skip the ORM (one adapted timestamp per send): they must read back alike."""
    instant = 1_767_225_600.25
    hook = make_hook(http_variant).hook
    hook.configure(clock=lambda: instant, log_batch=2, log_interval=60)
    ids = send(hook, receiver, 2)
    rows = WebhookDelivery.objects.using(hook.database.alias).filter(delivery_id__in=ids)
    expected = datetime.fromtimestamp(instant, UTC)
    assert len(rows) == 2
    for row in rows:
        assert row.created_at == row.updated_at == row.delivered_at == expected
        assert (row.instance, row.adapter, row.event, row.last_error) == (
            "default",
            "http",
            "e",
            "",
        )
        assert row.target == receiver.url()


def test_more_rows_than_one_statement_takes_are_all_written(make_hook, http_variant):
    """Rows held while the database was down can exceed one statement's parameters."""
    hook = make_hook(http_variant).hook
    fields = [
        hook._row_fields(
            f"held-{i}", "https://hooks.example.com/x?token=t", "e", 3, status="succeeded"
        )
        for i in range(1_100)
    ]
    hook._log._rows.extend(fields)
    with CaptureQueriesContext(connections[hook.database.alias]) as queries:
        assert hook._log.flush() == 1_100
    inserts = sum(q["sql"].startswith("INSERT") for q in queries.captured_queries)
    assert 1 < inserts <= 1_100 // 50  # chunks of many rows, within the parameter limit
    assert len(stored(hook)) == 1_100
    row = WebhookDelivery.objects.using(hook.database.alias).get(delivery_id="held-7")
    assert row.target == "https://hooks.example.com/x?[redacted]"
