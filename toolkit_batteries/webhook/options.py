"""Options of the ``webhook`` service (signed webhook delivery)."""

from __future__ import annotations

from datetime import timedelta

from toolkit_batteries.core.option_kinds import non_negative, relation, warn_when_set
from toolkit_batteries.core.options import Duration, option, options_class
from toolkit_batteries.queue.options import QueueOptions

__all__ = ["WebhookOptions"]


@options_class
class WebhookOptions:
    """Options of ``webhook``; adapters ``http`` (default) and ``queue``.

    The logger is injected from code, not configured.
    """

    __checks__ = (
        non_negative("toolkit_webhook.E002").on("timeout", "replay_tolerance", "max_retries"),
        warn_when_set(
            "toolkit_webhook.W001",
            "is on",
            hint="deliveries may reach loopback, private and link-local addresses and plain http; "
            "keep it for development",
        ).on("allow_private_targets"),
        relation(
            "toolkit_webhook.W002",
            lambda o: (
                "queue options are set on the http adapter, which ignores them"
                if str(o.queue_adapter or "").strip()
                or o.queue_opts is not None
                or o.dead_letter_topic
                else None
            ),
            adapters=("http",),
            warning=True,
            hint='set adapter "queue", or remove queue_adapter, queue_opts and dead_letter_topic',
        ),
    )

    timeout: Duration = option(timedelta(seconds=10), doc="per-delivery timeout")
    max_retries: int = option(0, doc="retries after the initial attempt")
    allow_private_targets: bool = option(
        False, doc="permit http(s) targets that resolve to private addresses"
    )
    queue_adapter: str = option("", doc="queue adapter backing the queue adapter")
    dead_letter_topic: str = option("", doc="queue topic of deliveries that exhaust retries")
    replay_tolerance: Duration = option(
        timedelta(minutes=5), doc="allowed drift of a signature's timestamp before rejection"
    )
    queue_opts: QueueOptions | None = option(
        None, doc="queue options of the queue adapter; unset until a key is given"
    )
