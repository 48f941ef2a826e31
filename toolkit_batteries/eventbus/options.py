"""Options of the ``eventbus`` service (publish/subscribe)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.groups import KVServerBlock
from toolkit_batteries.core.option_kinds import opens, reserved_kv_url
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
        reserved_kv_url(
            "toolkit_eventbus.W001", hint="set kvserver.addr (host:port or a redis:// URL) instead"
        ),
    )

    buffer_size: int = option(1024, doc="per-topic buffer size")
    max_handlers: int = option(128, doc="maximum handler count")
    handler_timeout: Duration = option(timedelta(seconds=30), doc="per-handler delivery timeout")
    close_timeout: Duration = option(timedelta(seconds=5), doc="shutdown timeout")
    kvserver: KVServerBlock = option(
        KVServerBlock(), doc="key-value server connection (kvserver adapter)"
    )
