"""Transactional outbox and inbox, relayed by polling (``db``) or change capture (``cdc``).

::

    from django.db import transaction
    from toolkit_batteries import services

    with transaction.atomic():
        order.save()
        services.outbox().publish("orders.created", {"id": order.pk})

``python manage.py outbox_relay`` (or ``toolkit outbox:relay``) publishes committed
messages to the eventbus or queue battery; consumers deduplicate with
``services.outbox().inbox("name").seen(message_id)``. See :mod:`.base` and :mod:`.relay`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Delivered,
        Inbox,
        Outbox,
        OutboxClosedError,
        OutboxError,
        Record,
        Status,
        decode,
    )

__all__ = [
    "Delivered",
    "Inbox",
    "Outbox",
    "OutboxClosedError",
    "OutboxError",
    "Record",
    "Status",
    "decode",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Delivered": "base",
    "Inbox": "base",
    "Outbox": "base",
    "OutboxClosedError": "base",
    "OutboxError": "base",
    "Record": "base",
    "Status": "base",
    "decode": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
