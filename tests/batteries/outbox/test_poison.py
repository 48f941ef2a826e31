"""A poison message that kills the relay process, on SQLite and on the real PostgreSQL.

Real ``manage.py outbox_relay`` processes publish through :mod:`.poison_fixture`: every
message is appended to a deliveries file, except the poison one, on which the relay
process SIGKILLs itself. The test restarts the relay after each death, as a supervisor
would, and checks the promise: the poison is buried after ``max_attempts`` deaths, the
messages behind it are published, and its batch neighbours are published again at most
once.
"""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

import pytest

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

from .conftest import clear_tables, relay_env, start_relay, wait_for

PUBLISH = "tests.batteries.outbox.poison_fixture.publish"
MAX_ATTEMPTS = 5  # the default


@pytest.fixture(params=["sqlite", "postgres"])
def dsn(request) -> str:
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_dsn")
    url = request.getfixturevalue("postgres_dsn")
    clear_tables(url)
    request.addfinalizer(lambda: clear_tables(url))
    return url


def test_a_message_that_kills_the_relay_is_buried_and_the_rest_flow(dsn, tmp_path: Path):
    container = Container(Config.load({"outbox": {"adapter": "db", "options": {"dsn": dsn}}}, {}))
    try:
        outbox = container.outbox()
        before = [outbox.publish("orders", {"n": n}) for n in (1, 2)]
        poison = outbox.publish("orders", {"poison": True})
        behind = [outbox.publish("orders", {"n": n}) for n in (4, 5, 6)]

        deliveries, log = tmp_path / "deliveries", tmp_path / "relay.log"
        env = relay_env(
            OUTBOX__DEFAULT__DSN=dsn,
            OUTBOX__DEFAULT__BATCH_SIZE="10",
            OUTBOX__DEFAULT__LOCK_SECONDS="1",
            OUTBOX__DEFAULT__POLL_INTERVAL="100ms",
            POISON_DELIVERIES=str(deliveries),
        )

        def settled() -> bool:
            status = outbox.status()
            return status.pending == 0 and status.processed == 5 and status.failed == 1

        deaths = 0
        for _ in range(MAX_ATTEMPTS + 2):  # old code: killed forever, never settles
            relay = start_relay(env, log, "--publish", PUBLISH)

            def ended(relay=relay) -> bool:
                return relay.poll() is not None or settled()

            try:
                wait_for(ended, 90, "a death or the end")
            finally:
                if relay.poll() is None:
                    relay.send_signal(signal.SIGTERM)
                    assert relay.wait(30) == 0, log.read_text()
            if relay.returncode == -signal.SIGKILL:
                deaths += 1
                continue
            break
        assert settled(), (deaths, outbox.status(), log.read_text()[-2000:])
        assert deaths == MAX_ATTEMPTS

        (dead,) = outbox.dead_messages()
        assert dead.message_id == poison
        assert dead.last_error.startswith("RelayStopped: the relay stopped while holding it 5")
        assert "moved to the dead list" in log.read_text()

        published = Counter(deliveries.read_text().split())
        assert poison not in published
        assert all(published[mid] == 1 for mid in behind), published
        # Published before the first death, then once more: never once per death.
        assert all(1 <= published[mid] <= 2 for mid in before), published
        assert sum(published.values()) <= len(before) * 2 + len(behind)
    finally:
        container.close()
