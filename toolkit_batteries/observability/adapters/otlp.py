"""The ``otlp`` adapter: the OpenTelemetry SDK exporting traces and metrics over OTLP/HTTP.

Spans go through a ``BatchSpanProcessor`` to ``<endpoint>/v1/traces``, metrics through a
``PeriodicExportingMetricReader`` to ``<endpoint>/v1/metrics`` (``application/x-protobuf``).
The exporters post through the toolkit's guarded ``requests`` session (no redirects, no
proxy from the environment; ``http://`` mounted only for a loopback ``insecure``
endpoint). The collector is infrastructure the operator names, like a database, so a
private address is allowed. ``headers`` go on every export request and nowhere else: not
in a log line, an error or a repr.

The resource carries ``service.name`` (the ``service_name`` option),
``service.instance.id`` (host and process id) and ``toolkit.instance`` (the battery
instance). ``sample_ratio`` (0 = unset = every trace) drives a parent-based ratio
sampler; ``attr_value_limit`` caps string attribute values; ``set_globals`` registers the
providers as OpenTelemetry's global ones, so the library instrumentations
(:meth:`OTLPObservability.instrument`) and ``opentelemetry.trace.get_tracer`` use them.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from toolkit_batteries.core.errors import InvalidOptionsError, MissingExtraError

from ..base import Observability, SpanHandle, clean_attributes
from ..target import otlp_base_url

try:
    from opentelemetry import metrics as otel_metrics
    from opentelemetry import trace as otel_trace
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
    from opentelemetry.trace import Status, StatusCode
except ImportError:  # pragma: no cover - exercised without the extra
    raise MissingExtraError("observability", "otlp", "otlp", "opentelemetry-sdk") from None

if TYPE_CHECKING:
    from toolkit_batteries.core.adapter import OpenContext

__all__ = ["OTLPObservability"]

logger = logging.getLogger("toolkit.observability")

#: Seconds an export request may take (the container closes a service within 5 s).
EXPORT_TIMEOUT = 3.0

#: The library instrumentations :meth:`OTLPObservability.instrument` knows.
INSTRUMENTATIONS = {
    "django": "opentelemetry.instrumentation.django.DjangoInstrumentor",
    "redis": "opentelemetry.instrumentation.redis.RedisInstrumentor",
    "psycopg": "opentelemetry.instrumentation.psycopg.PsycopgInstrumentor",
    "celery": "opentelemetry.instrumentation.celery.CeleryInstrumentor",
}


class _Span(SpanHandle):
    __slots__ = ("limit", "span")

    def __init__(self, span: Any, limit: int) -> None:
        self.span = span
        self.limit = limit

    def set_attribute(self, key: str, value: Any) -> None:
        self.span.set_attributes(clean_attributes({key: value}, self.limit))

    def record_error(self, exc: BaseException) -> None:
        self.span.set_attribute("exception.type", type(exc).__qualname__)
        self.span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))


class OTLPObservability(Observability):
    """Traces and metrics through the OpenTelemetry SDK to an OTLP/HTTP collector."""

    adapter_name = "otlp"

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider,
        sessions: tuple[Any, ...] = (),
        levels: dict[str, int] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._levels = dict(levels or {})
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self._tracer = tracer_provider.get_tracer("toolkit_batteries")
        self._meter = meter_provider.get_meter("toolkit_batteries")
        self._instruments: dict[tuple[str, str], Any] = {}
        self._sessions = sessions
        self._instrumented: list[Any] = []

    @classmethod
    def open(cls, ctx: OpenContext) -> OTLPObservability:
        from toolkit_batteries.core.outbound.requests_adapter import guarded_session

        options, instance = ctx.options, ctx.instance
        base = otlp_base_url(options, instance)
        for field in ("ca_file", "cert_file", "key_file"):
            path = getattr(options, field)
            if path and not os.path.isfile(path):
                raise InvalidOptionsError(
                    "observability", field, "names no readable file", instance=instance
                )
        plaintext = base.startswith("http://")
        if plaintext:
            logger.warning(
                "observability.%s: exporting in plaintext to a loopback collector", instance
            )
        levels: dict[str, int] = {}
        if options.verbose:  # restored at close
            for name in ("opentelemetry", logger.name):
                levels[name] = logging.getLogger(name).level
                logging.getLogger(name).setLevel(logging.DEBUG)
        headers = {str(k): str(v) for k, v in (options.headers or {}).items()}
        sessions = tuple(
            guarded_session(allow_insecure=plaintext, allow_private=True) for _ in range(2)
        )
        common: dict[str, Any] = {
            "certificate_file": options.ca_file or None,
            "client_certificate_file": options.cert_file or None,
            "client_key_file": options.key_file or None,
            "headers": headers,
            "timeout": EXPORT_TIMEOUT,
        }
        resource = Resource.create(
            {
                "service.name": options.service_name,
                "service.instance.id": f"{socket.gethostname()}-{os.getpid()}",
                "toolkit.instance": instance,
            }
        )
        limit = options.attr_value_limit
        tracer_provider = TracerProvider(
            resource=resource,
            sampler=ParentBased(TraceIdRatioBased(options.sample_ratio or 1.0)),
            span_limits=SpanLimits(max_span_attribute_length=limit if limit > 0 else 4096),
        )
        tracer_provider.add_span_processor(
            BatchSpanProcessor(
                OTLPSpanExporter(endpoint=base + "/v1/traces", session=sessions[0], **common),
                export_timeout_millis=int(EXPORT_TIMEOUT * 1000),
            )
        )
        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=base + "/v1/metrics", session=sessions[1], **common),
            export_timeout_millis=EXPORT_TIMEOUT * 1000,
        )
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
        if options.set_globals:
            otel_trace.set_tracer_provider(tracer_provider)
            otel_metrics.set_meter_provider(meter_provider)
        logger.info(
            "observability.%s: otlp exporter open (%d header(s), values redacted)",
            instance,
            len(headers),
        )
        return cls._opened(
            ctx,
            cls(
                instance=instance,
                emitter=options.service_name,
                attr_value_limit=limit,
                tracer_provider=tracer_provider,
                meter_provider=meter_provider,
                sessions=sessions,
                levels=levels,
            ),
        )

    @contextmanager
    def _start(self, name: str, attributes: dict[str, Any]) -> Iterator[SpanHandle]:
        with self._tracer.start_as_current_span(
            name, attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            handle = _Span(span, self.attr_value_limit)
            try:
                yield handle
            except BaseException as exc:
                handle.record_error(exc)
                raise

    def _metric(self, kind: str, name: str, value: float, attributes: dict[str, Any]) -> None:
        instrument: Any = self._instruments.get((kind, name))
        if instrument is None:
            make = self._meter.create_counter if kind == "counter" else self._meter.create_histogram
            instrument = self._instruments[(kind, name)] = make(name)
        if kind == "counter":
            instrument.add(value, attributes)
        else:
            instrument.record(value, attributes)

    def _flush(self, timeout: float) -> bool:
        millis = int(timeout * 1000)
        traced = self.tracer_provider.force_flush(millis)
        measured = self.meter_provider.force_flush(millis)
        return bool(traced) and bool(measured)

    def instrument(self, *libraries: str) -> None:
        """Turn on the OpenTelemetry instrumentation of ``libraries`` (``django``,
        ``redis``, ``psycopg``, ``celery``) with this instance's providers.

        Each needs its ``opentelemetry-instrumentation-<name>`` package; the ``otlp`` extra
        brings all four. Call it once per process (``AppConfig.ready``);
        :meth:`close` turns them off again.
        """
        from importlib import import_module

        for name in libraries:
            path = INSTRUMENTATIONS.get(name)
            if path is None:
                raise ValueError(
                    f"unknown instrumentation {name!r}; known: {sorted(INSTRUMENTATIONS)}"
                )
            module, _, attr = path.rpartition(".")
            try:
                instrumentor = getattr(import_module(module), attr)()
            except ImportError:
                raise MissingExtraError(
                    "observability", "otlp", "otlp", f"opentelemetry-instrumentation-{name}"
                ) from None
            if instrumentor.is_instrumented_by_opentelemetry:
                continue
            instrumentor.instrument(
                tracer_provider=self.tracer_provider, meter_provider=self.meter_provider
            )
            self._instrumented.append(instrumentor)

    def close(self) -> None:
        super().close()
        for instrumentor in reversed(self._instrumented):
            instrumentor.uninstrument()
        self._instrumented.clear()
        try:
            self.tracer_provider.shutdown()
            self.meter_provider.shutdown(timeout_millis=EXPORT_TIMEOUT * 1000)
        finally:
            for session in self._sessions:
                session.close()
            for name, level in self._levels.items():
                logging.getLogger(name).setLevel(level)
