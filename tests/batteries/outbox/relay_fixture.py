"""A ``--publish`` function for the relay child processes of the tests.

It publishes through the real queue battery (the ``db`` queue on the test's PostgreSQL),
then waits ``RELAY_FIXTURE_DELAY`` seconds (default 0.05), so a test can kill the relay
while a batch is half published.
"""

from __future__ import annotations

import os
import time

from toolkit_batteries import services
from toolkit_batteries.outbox import Record

DELAY = float(os.environ.get("RELAY_FIXTURE_DELAY", "0.05"))


def publish(record: Record) -> None:
    """Push the envelope to the queue topic of the record, then linger."""
    services.queue().push(record.topic, record.envelope())
    if DELAY:
        time.sleep(DELAY)
