"""Eight processes reserving one key: exactly one wins, on Redis, PostgreSQL and SQLite."""

from __future__ import annotations

import multiprocessing

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from ..cache.helpers import unique
from .conftest import cleanup, store_block


def _reserve(block: dict, instance: str, key: str, start, results) -> None:
    """Child process: open the store, wait for the start signal, reserve, report."""
    container = Container(Config.load({"idempotency": {instance: block}}, {}))
    store = container.idempotency(instance)
    start.wait(20)
    reservation = store.reserve(key, fingerprint="same-request")
    if reservation.owned:
        reservation.commit({"winner": multiprocessing.current_process().pid})
    results.put(reservation.state.value)
    container.close()


@pytest.mark.parametrize("variant", ["kvserver", "db-postgres", "db-sqlite"])
def test_eight_processes_one_winner(variant, tmp_path, request):
    instance, key = unique(), unique("order-")
    block = store_block(variant, tmp_path, request)
    # The table comes from the migrations (sqlite_dsn and postgres_dsn are migrated);
    # opening once here checks it, then every connection of this process is closed so
    # no child inherits one (Django connections must not cross a fork).
    setup = Container(Config.load({"idempotency": {instance: block}}, {}))
    setup.idempotency(instance)
    setup.close()
    from django.db import connections

    connections.close_all()
    context = multiprocessing.get_context("fork")
    start, results = context.Event(), context.Queue()
    processes = [
        context.Process(target=_reserve, args=(block, instance, key, start, results))
        for _ in range(8)
    ]
    try:
        for process in processes:
            process.start()
        start.set()
        states = sorted(results.get(timeout=60) for _ in processes)
        for process in processes:
            process.join(30)
        assert [p.exitcode for p in processes] == [0] * 8
        assert states.count("new") == 1
        assert states.count("in_progress") + states.count("completed") == 7
        final = Container(Config.load({"idempotency": {instance: block}}, {}))
        record = final.idempotency(instance).get(key)
        assert record.state.value == "completed" and set(record.response) == {"winner"}
        final.close()
    finally:
        cleanup(variant, block, instance, request)
