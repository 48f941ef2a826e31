"""The observability service: spans and metrics, with one small API for every adapter.

::

    obs = services.observability()
    with obs.span("report.build", rows=120) as span:      # a child of any open span
        span.set_attribute("report.kind", "nightly")
        build_report()
    obs.add("reports.built", 1, kind="nightly")             # a counter
    obs.record("report.seconds", 1.7)                       # a histogram

How another battery traces an operation that crosses a process boundary (a queue push,
a cache round trip): ask for the service inside its adapter's ``open`` and wrap the call
with :meth:`Observability.operation`, which names the span ``<service>.<operation>`` and
sets ``toolkit.service`` and ``toolkit.instance``::

    # in SomeQueue.open(ctx):  self._obs = ctx.container.observability()
    with self._obs.operation("queue", self.instance, "push", queue=name):
        self._client.lpush(key, payload)

Adapters implement three primitives (:meth:`_start`, :meth:`_metric`, :meth:`_flush`);
this class writes the context managers, the attribute checks and the value limit once.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, ClassVar, TypeVar

from toolkit_batteries.core import tracing
from toolkit_batteries.core.adapter import OpenContext, Service

__all__ = [
    "DEFAULT_ATTR_VALUE_LIMIT",
    "Observability",
    "SpanHandle",
    "clean_attributes",
    "endpoint_url",
]

#: Cap on a string attribute value when ``attr_value_limit`` is 0 (unset).
DEFAULT_ATTR_VALUE_LIMIT = 4096

_SCALARS = (str, bool, int, float)

_O = TypeVar("_O", bound="Observability")


def clean_attributes(attributes: Mapping[str, Any], limit: int) -> dict[str, Any]:
    """Return ``attributes`` with ``None`` dropped, strings capped at ``limit`` characters,
    and any other non-scalar value turned into its ``str``."""
    clean: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, list | tuple) and all(isinstance(v, _SCALARS) for v in value):
            value = [v[:limit] if isinstance(v, str) else v for v in value]
        elif not isinstance(value, _SCALARS):
            value = str(value)
        if isinstance(value, str):
            value = value[:limit]
        clean[str(key)] = value
    return clean


def endpoint_url(endpoint: str, *, insecure: bool) -> str:
    """Return the collector's base URL for ``endpoint`` (``host:port`` or a URL)."""
    endpoint = endpoint.strip().rstrip("/")
    if "://" in endpoint:
        return endpoint
    return f"{'http' if insecure else 'https'}://{endpoint}"


class SpanHandle:
    """The open span a ``with obs.span(...)`` block receives."""

    __slots__ = ()

    def set_attribute(self, key: str, value: Any) -> None:
        """Set one attribute on the span (ignored by ``noop`` and unsampled spans)."""

    def record_error(self, exc: BaseException) -> None:
        """Mark the span failed with ``exc``'s type (the message is not recorded)."""


class Observability(Service):
    """Traces and metrics; adapters ``stdout`` (default), ``noop`` and ``otlp``."""

    service_name: ClassVar[str] = "observability"

    def __init__(
        self,
        *,
        instance: str = "default",
        emitter: str = "toolkit",
        attr_value_limit: int = 0,
    ) -> None:
        self.instance = instance
        #: The ``service_name`` option: the emitting service (``service.name``).
        self.emitter = emitter
        self.attr_value_limit = (
            attr_value_limit if attr_value_limit > 0 else DEFAULT_ATTR_VALUE_LIMIT
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.instance!r} service_name={self.emitter!r}>"

    @staticmethod
    def _opened(ctx: OpenContext, observability: _O) -> _O:
        """Return ``observability`` after making the ``default`` instance the process's
        tracer for battery operations (:mod:`toolkit_batteries.core.tracing`)."""
        if ctx.instance == "default":
            tracing.activate(observability)
        return observability

    @classmethod
    def _open_plain(cls: type[_O], ctx: OpenContext, **extra: Any) -> _O:
        """Build an adapter from the options every adapter reads (plus ``extra``), opened.

        The adapters that need no client of their own (``noop``, ``stdout``) open alike:
        name, emitting service and attribute limit from the options, then :meth:`_opened`.
        """
        options = ctx.options
        return cls._opened(
            ctx,
            cls(
                instance=ctx.instance,
                emitter=options.service_name,
                attr_value_limit=options.attr_value_limit,
                **extra,
            ),
        )

    def close(self) -> None:
        """Stop receiving battery operations' spans (adapters extend it)."""
        tracing.deactivate(self)

    # -- the API ------------------------------------------------------------------

    def span(self, name: str, **attributes: Any) -> AbstractContextManager[SpanHandle]:
        """Return a context manager opening a span named ``name`` for its block, as a
        child of the span open in this thread or task (yields a :class:`SpanHandle`).

        An exception leaving the block marks the span failed (its type only, never the
        message) and propagates.
        """
        if not name or not isinstance(name, str):
            raise ValueError("span name must be a non-empty string")
        return self._start(name, clean_attributes(attributes, self.attr_value_limit))

    def operation(
        self, service: str, instance: str, operation: str, **attributes: Any
    ) -> AbstractContextManager[SpanHandle]:
        """Return ``span("<service>.<operation>")`` carrying ``toolkit.service`` and
        ``toolkit.instance``: the hook batteries wrap their remote calls with."""
        return self.span(
            f"{service}.{operation}",
            **{"toolkit.service": service, "toolkit.instance": instance},
            **attributes,
        )

    def add(self, name: str, value: int | float = 1, **attributes: Any) -> None:
        """Add ``value`` (not negative) to the counter ``name``."""
        if value < 0:
            raise ValueError("a counter only goes up; use record() for other values")
        self._metric("counter", name, value, clean_attributes(attributes, self.attr_value_limit))

    def record(self, name: str, value: int | float, **attributes: Any) -> None:
        """Record one ``value`` in the histogram ``name``."""
        self._metric("histogram", name, value, clean_attributes(attributes, self.attr_value_limit))

    def flush(self, timeout: float = 5.0) -> bool:
        """Export what is buffered now; ``True`` when it was all handed over in time.

        A failed export (collector down, TLS refused) is logged by the exporter and
        dropped, never raised: telemetry must not break the operation it observes.
        """
        return self._flush(timeout)

    # -- the primitives adapters implement ----------------------------------------

    def _start(self, name: str, attributes: dict[str, Any]) -> Any:
        """Return a context manager opening the span and yielding a :class:`SpanHandle`."""
        raise NotImplementedError

    def _metric(self, kind: str, name: str, value: float, attributes: dict[str, Any]) -> None:
        raise NotImplementedError

    def _flush(self, timeout: float) -> bool:
        return True
