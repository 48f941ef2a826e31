"""Options of the ``eventbus`` service (publish/subscribe)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBlock, kvserver_block
from toolkit_batteries.core.option_kinds import opens
from toolkit_batteries.core.options import Duration, option, options_class

__all__ = ["EventBusOptions"]


@options_class
class EventBusOptions:
    """Options of ``eventbus``; adapters ``memory`` (default) and ``kvserver``."""

    __checks__ = (
        opens(
            "toolkit_eventbus.E002",
            "toolkit_batteries.eventbus.base:settings_from_options",
            hint="buffer_size and max_handlers must be at least 1; timeouts positive",
        ),
    )

    buffer_size: int = option(1024, doc="per-topic buffer size")
    max_handlers: int = option(128, doc="maximum handler count")
    handler_timeout: Duration = option(timedelta(seconds=30), doc="per-handler delivery timeout")
    close_timeout: Duration = option(timedelta(seconds=5), doc="shutdown timeout")
    kvserver: KVServerBlock = kvserver_block("toolkit_eventbus.W001")
