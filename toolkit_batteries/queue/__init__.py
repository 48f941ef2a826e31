"""Message queue with visibility timeouts, in memory, on a key-value server or in SQL.

``services.queue()`` returns the configured adapter (``memory`` by default,
``kvserver`` on Redis, ``db`` on PostgreSQL or SQLite); every adapter has the same
at-least-once API (:class:`Queue`). Jobs, their dispatcher, the worker and the Celery
path live in :mod:`toolkit_batteries.queue.jobs`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        DeadMessage,
        Message,
        Queue,
        QueueClosedError,
        QueueError,
        QueueFullError,
    )

__all__ = [
    "DeadMessage",
    "Message",
    "Queue",
    "QueueClosedError",
    "QueueError",
    "QueueFullError",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "DeadMessage": "base",
    "Message": "base",
    "Queue": "base",
    "QueueClosedError": "base",
    "QueueError": "base",
    "QueueFullError": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
