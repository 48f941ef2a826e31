"""What the client sent PostgreSQL while a block ran, read from libpq's protocol trace.

Round trips are counted the way the benches count them: one per ``Sync`` (extended
protocol) or simple ``Query`` the client sends. Each message is (type, rest of the line),
e.g. ``("Bind", '"" "_pg3_0" 1 0 1 3 \'300\' 1 0')`` or ``("Query", '"BEGIN"')``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from typing import Any


def sent_messages(django_connection: Any, block: Callable[[], object]) -> list[tuple[str, str]]:
    """Run ``block()`` tracing this thread's connection; return the messages the client sent."""
    from psycopg import pq

    django_connection.ensure_connection()
    pgconn = django_connection.connection.pgconn
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            block()
        finally:
            pgconn.untrace()
        trace.seek(0)
        fields = [line.rstrip("\n").split("\t") for line in trace]
    # A line is "F<TAB>length<TAB>Kind<TAB> rest" (REGRESS_MODE: no timestamps, no OIDs).
    return [(f[2], "\t".join(f[3:]).strip()) for f in fields if len(f) > 2 and f[0] == "F"]


def round_trips(messages: list[tuple[str, str]]) -> int:
    """Count the client's waits: one per ``Sync`` or simple ``Query``."""
    return sum(kind in ("Sync", "Query") for kind, _ in messages)
