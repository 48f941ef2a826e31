"""The ``stdout`` adapter (the default): one JSON line per finished span and per metric.

Written to the process's standard output (looked up at each write, so a test's capture
or a redirected ``sys.stdout`` receives it), with no OpenTelemetry import. A span line::

    {"kind": "span", "name": "queue.push", "trace_id": "…32 hex…", "span_id": "…16 hex…",
     "parent_id": "…16 hex… or null", "start": 1764012345.123456, "duration_ms": 0.41,
     "status": "ok", "service.name": "toolkit", "toolkit.instance": "default",
     "attributes": {"toolkit.service": "queue", ...}}

A metric line has ``"kind": "metric"``, ``"type"`` (``counter`` / ``histogram``),
``"name"``, ``"value"`` and ``"attributes"``. With ``verbose`` each line is also logged
at DEBUG on the ``toolkit.observability`` logger.
"""

from __future__ import annotations

import contextvars
import json
import logging
import random
import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..base import Observability, SpanHandle

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["StdoutObservability"]

logger = logging.getLogger("toolkit.observability")

#: (trace_id, span_id, sampled) of the span open in this context.
_current: contextvars.ContextVar[tuple[str, str, bool] | None] = contextvars.ContextVar(
    "toolkit_observability_span", default=None
)


class _Span(SpanHandle):
    __slots__ = ("attributes", "status")

    def __init__(self, attributes: dict[str, Any]) -> None:
        self.attributes = attributes
        self.status = "ok"

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[str(key)] = value

    def record_error(self, exc: BaseException) -> None:
        self.status = "error"
        self.attributes["exception.type"] = type(exc).__qualname__


_UNSAMPLED = SpanHandle()


class StdoutObservability(Observability):
    """Spans and metrics as JSON lines on standard output."""

    adapter_name = "stdout"

    def __init__(self, *, sample_ratio: float = 1.0, verbose: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sample_ratio = sample_ratio
        self.verbose = verbose

    @classmethod
    def open(cls, ctx: OpenContext) -> StdoutObservability:
        options = ctx.options
        return cls._open_plain(
            ctx, sample_ratio=options.sample_ratio or 1.0, verbose=options.verbose
        )

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, default=str, separators=(",", ":"))
        sys.stdout.write(line + "\n")
        if self.verbose:
            logger.debug("observability.%s: %s", self.instance, line)

    @contextmanager
    def _start(self, name: str, attributes: dict[str, Any]) -> Iterator[SpanHandle]:
        parent = _current.get()
        if parent is None:
            trace_id = secrets.token_hex(16)
            sampled = self.sample_ratio >= 1.0 or random.random() < self.sample_ratio
        else:
            trace_id, _, sampled = parent
        span_id = secrets.token_hex(8)
        token = _current.set((trace_id, span_id, sampled))
        span = _Span(attributes) if sampled else None
        started, clock = time.time(), time.perf_counter()
        try:
            yield span if span is not None else _UNSAMPLED
        except BaseException as exc:
            if span is not None:
                span.record_error(exc)
            raise
        finally:
            _current.reset(token)
            if span is not None:
                limit = self.attr_value_limit
                self._write(
                    {
                        "kind": "span",
                        "name": name,
                        "trace_id": trace_id,
                        "span_id": span_id,
                        "parent_id": parent[1] if parent else None,
                        "start": round(started, 6),
                        "duration_ms": round((time.perf_counter() - clock) * 1000, 3),
                        "status": span.status,
                        "service.name": self.emitter,
                        "toolkit.instance": self.instance,
                        "attributes": {
                            k: v[:limit] if isinstance(v, str) else v
                            for k, v in span.attributes.items()
                        },
                    }
                )

    def _metric(self, kind: str, name: str, value: float, attributes: dict[str, Any]) -> None:
        self._write(
            {
                "kind": "metric",
                "type": kind,
                "name": name,
                "value": value,
                "service.name": self.emitter,
                "toolkit.instance": self.instance,
                "attributes": attributes,
            }
        )

    def _flush(self, timeout: float) -> bool:
        sys.stdout.flush()
        return True
