"""Message queue with visibility timeouts, in memory, on a key-value server or in SQL.

``services.queue()`` returns the configured adapter (``memory`` by default,
``kvserver`` on Redis, ``db`` on PostgreSQL or SQLite); every adapter has the same
at-least-once API (:class:`Queue`). Jobs, their dispatcher, the worker and the Celery
path live in :mod:`toolkit_batteries.queue.jobs`.
"""

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="DeadMessage Message Queue QueueClosedError QueueError QueueFullError",
)
