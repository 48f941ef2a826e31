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

from toolkit_batteries.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    base="Event EventBus EventBusClosedError Subscription TooManyHandlersError encode_payload",
)
