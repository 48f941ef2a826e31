"""The ``memory`` adapter: publish/subscribe inside this process (the default).

``publish`` hands the event to each subscription's buffer and returns at once; each
subscription's worker thread calls its handler (see :mod:`toolkit_batteries.eventbus.base`
for buffers, timeouts and closing). Other processes see nothing: use ``kvserver`` for that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.eventbus.base import (
    Event,
    EventBus,
    EventBusClosedError,
    check_topic,
    encode_payload,
    settings_from_options,
)

__all__ = ["MemoryEventBus"]


class MemoryEventBus(EventBus):
    """In-process publish/subscribe with one worker per subscription."""

    adapter_name = "memory"

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        """Open an empty bus from the service's options."""
        return cls(settings_from_options(ctx.options, instance=ctx.instance), instance=ctx.instance)

    def publish(self, topic: str, payload: bytes | Mapping[str, Any]) -> None:
        """Queue ``payload`` for every subscription of ``topic`` in this process."""
        event = Event(check_topic(topic), encode_payload(payload))
        dispatcher = self._dispatcher
        if dispatcher.closed:
            raise EventBusClosedError(self.instance)
        dispatcher.count_published()
        dispatcher.deliver(event)
