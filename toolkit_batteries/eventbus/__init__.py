"""Publish/subscribe, in process or through a key-value server.

::

    from toolkit_batteries import services

    bus = services.eventbus()
    subscription = bus.subscribe("orders.created", handle_order)   # handle_order(event)
    bus.publish("orders.created", {"id": 7})
    subscription.unsubscribe()

Adapters: ``memory`` (default, this process) and ``kvserver`` (Redis pub/sub, every
process on the server). Delivery is at most once and never blocks the publisher; see
:mod:`toolkit_batteries.eventbus.base` for buffers, handler timeouts and closing.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import (
        Event,
        EventBus,
        EventBusClosedError,
        Subscription,
        TooManyHandlersError,
        encode_payload,
    )

__all__ = [
    "Event",
    "EventBus",
    "EventBusClosedError",
    "Subscription",
    "TooManyHandlersError",
    "encode_payload",
]

#: Public name -> the submodule defining it, imported on first use (PEP 562), so that
#: Django loading this app (``django.setup()``) does not import the battery's code.
_EXPORTS = {
    "Event": "base",
    "EventBus": "base",
    "EventBusClosedError": "base",
    "Subscription": "base",
    "TooManyHandlersError": "base",
    "encode_payload": "base",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
