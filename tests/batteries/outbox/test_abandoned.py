"""Abandoned rows (claimed, never settled) on every adapter: memory, db on SQLite and on
PostgreSQL, with the fake clock moving past each lease.

A relay "dies" on the poison message: its publish raises a ``BaseException`` the relay
does not catch, so the batch is left exactly as a killed process leaves it (claimed,
partly published, nothing marked). Each restart is a new relay (a new owner). The real
process version (SIGKILL) is in ``test_poison.py``.
"""

from __future__ import annotations

import json
from collections import Counter

from toolkit_batteries.outbox import Record


class RelayDied(BaseException):
    """The relay process is gone (not an error the relay could handle)."""


def test_a_message_relays_die_on_is_buried_after_max_attempts(opened):
    outbox = opened.outbox
    before = [outbox.publish("orders", {"n": n}) for n in (1, 2)]
    poison = outbox.publish("orders", {"poison": True})
    behind = [outbox.publish("orders", {"n": n}) for n in (4, 5, 6)]
    published: list[str] = []

    def publish(record: Record) -> None:
        if json.loads(record.payload).get("poison"):
            raise RelayDied
        published.append(record.message_id)

    deaths = 0
    for _ in range(outbox.settings.max_attempts + 2):  # old code: dies forever
        relay = outbox.relay(publish)
        try:
            while relay.run_once().claimed:
                pass
        except RelayDied:
            deaths += 1
            opened.clock.advance(outbox.settings.lock_seconds + 1)
            continue
        break
    assert deaths == outbox.settings.max_attempts == 5

    (dead,) = outbox.dead_messages()
    assert dead.message_id == poison and dead.attempts == 6
    assert "relay stopped while holding it 5 times" in dead.last_error
    status = outbox.status()
    assert (status.pending, status.processed, status.failed) == (0, 5, 1)
    counts = Counter(published)
    assert [counts[mid] for mid in before] == [2, 2]  # once before the first death, once after
    assert [counts[mid] for mid in behind] == [1, 1, 1]


def test_rows_behind_an_abandoned_one_are_given_back_without_an_attempt(opened):
    outbox = opened.outbox
    for n in range(4):
        outbox.publish("orders", {"n": n})
    lease = outbox.settings.lock_seconds
    # A relay claimed all four and died; the lease ran out.
    assert len(outbox._claim("dead-relay", 10, opened.clock(), lease)) == 4
    opened.clock.advance(lease + 1)
    got: list[Record] = []
    relay = outbox.relay(got.append)
    first = relay.run_once()
    assert (first.claimed, first.sent, first.released) == (1, 1, 3)
    while relay.run_once().claimed:
        pass
    assert [json.loads(r.payload)["n"] for r in got] == [0, 1, 2, 3]
    assert [r.attempts for r in got] == [2, 2, 2, 2]  # the dead claim, then this one
    assert all(r.abandoned for r in got)
    assert outbox.status().processed == 4
    # Fresh messages are claimed in batches again.
    for n in range(3):
        outbox.publish("orders", {"n": n})
    assert relay.run_once().claimed == 3
