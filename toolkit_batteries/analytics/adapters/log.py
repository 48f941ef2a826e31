"""The ``log`` adapter (default): every event is one record on the ``toolkit.analytics`` logger.

Why a logger: a project without a product-analytics account still sees what it would
track (in development, in tests with ``caplog``, or shipped by the log battery), with no
network and no buffer. The record's message is one line (kind, name, identity and the
properties as JSON); the event itself is attached as ``record.analytics_event`` (a dict)
for handlers that want structure. Properties are the caller's data, often user text, so
they pass through the toolkit's redactor first (values under secret-looking keys and
credentials such as ``Bearer ...`` or URL passwords are masked); the battery's options
hold no secret this adapter could log.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Self

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.redaction import redact

from ..base import Analytics, Event
from ..options import AnalyticsOptions

__all__ = ["LogAnalytics"]

logger = logging.getLogger("toolkit.analytics")


class LogAnalytics(Analytics):
    """Events written to the ``toolkit.analytics`` logger at INFO."""

    adapter_name = "log"

    def __init__(self, options: AnalyticsOptions, *, instance: str = "default") -> None:
        self.configure(options, instance=instance)
        self._lock = threading.Lock()
        self._sent = 0

    @classmethod
    def open(cls, ctx: OpenContext) -> Self:
        return cls(ctx.options, instance=ctx.instance)

    def _emit(self, event: Event) -> None:
        properties = redact(dict(event.properties))
        record = {
            "kind": event.kind,
            "event": event.name,
            "distinct_id": event.distinct_id,
            "properties": properties,
            "groups": event.groups,
            "timestamp": event.timestamp.isoformat(),
            "uuid": event.uuid,
        }
        logger.info(
            "analytics.%s: %s %s distinct_id=%s groups=%s properties=%s",
            self.instance,
            event.kind,
            _one_line(json.dumps(event.name, ensure_ascii=False)[1:-1]),
            _one_line(json.dumps(event.distinct_id, ensure_ascii=False)[1:-1]),
            _one_line(json.dumps(event.groups, ensure_ascii=False)),
            _one_line(json.dumps(properties, ensure_ascii=False, separators=(",", ":"))),
            extra={"analytics_event": record},
        )
        with self._lock:
            self._sent += 1

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"queued": 0, "sent": self._sent, "dropped": 0, "failed": 0}


def _one_line(text: str) -> str:
    """Return ``text`` as it can be written: JSON already escaped its control characters
    (a caller's ``"\\n"`` cannot forge a log line); a lone surrogate, which no UTF-8 log
    file or pipe can take, is written as its ``\\udXXX`` escape instead of failing."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
