"""A strict OTLP/HTTP receiver on 127.0.0.1, on the shared provider-server base.

No OpenTelemetry Collector binary is installed here, so the ``otlp`` adapter exports to
this stand-in, which answers as the Collector's ``otlpreceiver`` HTTP endpoint does:

* ``POST /v1/traces`` and ``POST /v1/metrics`` only: another path 404, another method 405
  (``405 method not allowed, supported: [POST]``, plain text);
* ``Content-Type`` ``application/x-protobuf`` or ``application/json``, else 415
  (``415 unsupported media type, supported: [application/json, application/x-protobuf]``,
  plain text);
* ``Content-Encoding`` ``gzip`` or ``deflate`` is undone (the exporter's two
  compressions); another encoding or a body that does not inflate: 400, plain text, as
  the Collector's decompression middleware answers;
* the body decoded with opentelemetry-proto's ``ExportTraceServiceRequest`` /
  ``ExportMetricsServiceRequest`` (OTLP/JSON with its hex trace and span ids); a body that
  does not decode, or an id of the wrong length: 400 with a ``google.rpc.Status``
  (code 3, ``InvalidArgument``) in the request's own encoding;
* success: 200 with an empty ``Export*ServiceResponse`` in the request's encoding.

What the Collector takes but OTLP requires of a well-behaved exporter is recorded in
:attr:`Receiver.problems` instead of refused: every resource names a ``service.name``,
every span has a non-zero 16-byte trace id and 8-byte span id, a name, a kind, and start
and end times in order. The ``receiver`` fixture asserts that list is empty after every
test, so each export the tests make is checked.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.rpc import status_pb2
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.provider_server import Answer, ProviderServer, Received

__all__ = ["Receiver", "attributes", "start_receiver"]

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
#: The Collector's default ``max_request_body_size`` (20 MiB).
MAX_BODY = 20 * 1024 * 1024
_KINDS = {
    "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
    "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse),
}
_TEXT = {"Content-Type": "text/plain; charset=utf-8"}
#: OTLP/JSON fields holding ids as hex (protobuf's JSON mapping would read base64).
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(items: Any) -> dict[str, Any]:
    """Return a protobuf ``KeyValue`` list as a dict."""
    return {kv.key: _value(kv.value) for kv in items}


class Undecodable(ValueError):
    """The body is not the message its path names."""


def _hex_ids(node: Any) -> None:
    """Turn OTLP/JSON's hex ids into the base64 protobuf's JSON mapping reads, in place."""
    if isinstance(node, list):
        for item in node:
            _hex_ids(item)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        size = _ID_FIELDS.get(key)
        if size is None:
            _hex_ids(value)
            continue
        if not isinstance(value, str):
            raise Undecodable(f"{key}: expected a hex string")
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise Undecodable(f"{key}: invalid hex") from None
        if raw and len(raw) != size:
            raise Undecodable(f"invalid length for ID in {key}")
        node[key] = base64.b64encode(raw).decode()


def _check_ids(message: Any) -> None:
    """Refuse a trace or span id of the wrong length, as the Collector's pdata does."""
    for rs in getattr(message, "resource_spans", ()):
        for ss in rs.scope_spans:
            for span in ss.spans:
                for name, size in (("trace_id", 16), ("span_id", 8), ("parent_span_id", 8)):
                    value = getattr(span, name)
                    if value and len(value) != size:
                        raise Undecodable(f"invalid length for ID in {name}")


class Receiver(ProviderServer):
    """The receiver, the exports it accepted and what they got wrong."""

    content_types = (PROTOBUF, JSON)
    max_body = MAX_BODY

    def __init__(self) -> None:
        super().__init__("")
        #: OTLP requirements an accepted export broke (see the module docstring).
        self.problems: list[str] = []

    def start(self) -> Receiver:
        super().start()
        return self

    @property
    def url(self) -> str:
        """The endpoint as the adapter's ``endpoint`` option takes it (``host:port``)."""
        return f"127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ what arrived

    def exports(self, path: str) -> list[Received]:
        """Return the exports accepted on ``path``, each with its decoded ``message``."""
        return [r for r in self._records("POST", path) if r.status == 200]

    def spans(self) -> list[dict[str, Any]]:
        """Every span received, flattened with its resource attributes."""
        found = []
        for request in self.exports("/v1/traces"):
            for rs in request.message.resource_spans:  # type: ignore[attr-defined]
                resource = attributes(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        found.append(
                            {
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_id": span.parent_span_id.hex() or None,
                                "attributes": attributes(span.attributes),
                                "resource": resource,
                                "status": span.status.code,
                                "kind": span.kind,
                                "start": span.start_time_unix_nano,
                                "end": span.end_time_unix_nano,
                            }
                        )
        return found

    def metrics(self) -> dict[str, list[tuple[Any, dict[str, Any]]]]:
        """Metric name -> [(value, attributes)], sums and histogram counts."""
        found: dict[str, list[tuple[Any, dict[str, Any]]]] = {}
        for request in self.exports("/v1/metrics"):
            for rm in request.message.resource_metrics:  # type: ignore[attr-defined]
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        kind = metric.WhichOneof("data")
                        for point in getattr(metric, kind).data_points:
                            value = (
                                point.as_int if kind == "sum" and point.HasField("as_int") else None
                            )
                            if kind == "sum" and value is None:
                                value = point.as_double
                            if kind == "histogram":
                                value = (point.count, point.sum)
                            found.setdefault(metric.name, []).append(
                                (value, attributes(point.attributes))
                            )
        return found

    # ------------------------------------------------------------------ refusals

    def authorized(self, headers: dict[str, str]) -> bool:
        return True  # a Collector without an auth extension takes any caller

    def too_large(self, size: int) -> Answer:
        return 400, b"http: request body too large", _TEXT  # type: ignore[return-value]

    def malformed(self, request: Received) -> Any:
        if request.path not in _KINDS:
            return 404, b"404 page not found", _TEXT
        if request.method != "POST":
            return 405, b"405 method not allowed, supported: [POST]", _TEXT
        if request.content_type not in self.content_types:
            message = f"415 unsupported media type, supported: [{JSON}, {PROTOBUF}]"
            return 415, message.encode(), _TEXT
        encoding = request.header("content-encoding") or ""
        body = request.raw
        if encoding.lower() == "gzip" and body == b"\0":  # the base could not gunzip it
            return 400, b"gzip: invalid header", _TEXT
        if encoding.lower() == "deflate":
            try:
                body = zlib.decompress(body)
            except zlib.error:
                return 400, b"zlib: invalid header", _TEXT
        elif encoding.lower() not in ("", "gzip", "identity"):
            return 400, f"unsupported Content-Encoding: {encoding}".encode(), _TEXT
        try:
            request.message = self._decode(request, body)  # type: ignore[attr-defined]
        except Undecodable as exc:
            return self._status(request, 400, 3, str(exc))
        return None

    def _decode(self, request: Received, body: bytes) -> Any:
        message = _KINDS[request.path][0]()
        if request.content_type == PROTOBUF:
            try:
                message.ParseFromString(body)
            except (DecodeError, RuntimeWarning) as exc:
                raise Undecodable(f"proto: {exc}") from None
        else:
            try:
                document = json.loads(body)
                _hex_ids(document)
                json_format.ParseDict(document, message, ignore_unknown_fields=True)
            except (ValueError, json_format.ParseError) as exc:
                raise Undecodable(str(exc)) from None
        _check_ids(message)
        return message

    def _status(self, request: Received, http: int, code: int, message: str) -> Any:
        """Return a ``google.rpc.Status`` in the request's encoding (the Collector's body)."""
        status = status_pb2.Status(code=code, message=message)
        if request.content_type == JSON:
            return http, json_format.MessageToJson(status).encode(), {"Content-Type": JSON}
        return http, status.SerializeToString(), {"Content-Type": PROTOBUF}

    # ------------------------------------------------------------------ answers

    def answer(self, handler: Any, request: Received) -> None:
        self._inspect(request.message)  # type: ignore[attr-defined]
        response = _KINDS[request.path][1]()
        if request.content_type == JSON:
            body = json_format.MessageToJson(response).encode()
            return handler.send_json(200, body, {"Content-Type": JSON})
        handler.send_json(200, response.SerializeToString(), {"Content-Type": PROTOBUF})

    def _inspect(self, message: Any) -> None:
        """Record what OTLP requires of an exporter and this export lacks."""
        found = []
        groups = list(getattr(message, "resource_spans", ())) + list(
            getattr(message, "resource_metrics", ())
        )
        for group in groups:
            name = attributes(group.resource.attributes).get("service.name")
            if not isinstance(name, str) or not name:
                found.append("a resource without service.name")
        for rs in getattr(message, "resource_spans", ()):
            for ss in rs.scope_spans:
                for span in ss.spans:
                    label = span.name or "<unnamed>"
                    if not span.name:
                        found.append("a span without a name")
                    if span.trace_id in (b"", bytes(16)) or span.span_id in (b"", bytes(8)):
                        found.append(f"span {label}: an empty or zero trace or span id")
                    if span.kind == 0:
                        found.append(f"span {label}: kind unspecified")
                    if not 0 < span.start_time_unix_nano <= span.end_time_unix_nano:
                        found.append(f"span {label}: start and end times out of order")
        with self._lock:
            self.problems.extend(found)

    # ------------------------------------------------------------------ bench compatibility

    def shutdown(self) -> None:
        """Stop the receiver (``bench/observability.py`` stops it as a ``socketserver``)."""
        self.stop()

    def server_close(self) -> None:
        """Nothing more to close: :meth:`shutdown` closed the socket."""


def start_receiver() -> tuple[Receiver, Receiver]:
    """Start a receiver on a free 127.0.0.1 port; the caller calls ``shutdown()`` on it."""
    receiver = Receiver().start()
    return receiver, receiver
