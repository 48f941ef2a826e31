"""A ``--publish`` function for relay child processes that a poison message kills.

Every message is "published" by appending its id to the file ``POISON_DELIVERIES``
names (one ``write`` on an ``O_APPEND`` descriptor, so a line is in the file as soon as
the call returns, whatever happens to the process next). A message whose JSON payload
has ``"poison": true`` makes the relay process send itself SIGKILL, as a publisher
that crashes the interpreter (a segfaulting driver, the OOM killer) would.
"""

from __future__ import annotations

import json
import os
import signal

from toolkit_batteries.outbox import Record


def publish(record: Record) -> None:
    """Record the delivery of ``record``, or kill this process on a poison message."""
    if json.loads(record.payload).get("poison"):
        os.kill(os.getpid(), signal.SIGKILL)
    descriptor = os.open(
        os.environ["POISON_DELIVERIES"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
    )
    try:
        os.write(descriptor, f"{record.message_id}\n".encode())
    finally:
        os.close(descriptor)
