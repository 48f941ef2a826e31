"""A local OTLP/HTTP receiver: ``POST /v1/traces`` and ``/v1/metrics`` on 127.0.0.1.

It answers 200 with an empty protobuf response, keeps every request's headers and
decoded body (``ExportTraceServiceRequest`` / ``ExportMetricsServiceRequest`` from
``opentelemetry-proto``), and flattens the spans it received for assertions.
"""

from __future__ import annotations

import gzip
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_KINDS = {
    "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
    "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse),
}


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(items: Any) -> dict[str, Any]:
    """Return a protobuf ``KeyValue`` list as a dict."""
    return {kv.key: _value(kv.value) for kv in items}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    content_type: str
    message: Any


@dataclass
class Receiver:
    url: str
    port: int
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def received(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if r.path == path]

    def spans(self) -> list[dict[str, Any]]:
        """Every span received, flattened with its resource attributes."""
        found = []
        for request in self.received("/v1/traces"):
            for rs in request.message.resource_spans:
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
                            }
                        )
        return found

    def metrics(self) -> dict[str, list[tuple[Any, dict[str, Any]]]]:
        """Metric name -> [(value, attributes)], sums and histogram counts."""
        found: dict[str, list[tuple[Any, dict[str, Any]]]] = {}
        for request in self.received("/v1/metrics"):
            for rm in request.message.resource_metrics:
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

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.02)
        return predicate()


def start_receiver() -> tuple[Receiver, ThreadingHTTPServer]:
    """Start the receiver on a free 127.0.0.1 port; the caller shuts the server down."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            kinds = _KINDS.get(self.path)
            if kinds is None:
                self.send_response(404)
                self.end_headers()
                return
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            request_cls, response_cls = kinds
            message = request_cls()
            message.ParseFromString(body)
            with receiver.lock:
                receiver.requests.append(
                    Received(
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        self.headers.get("Content-Type", ""),
                        message,
                    )
                )
            payload = response_cls().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    receiver = Receiver(url=f"127.0.0.1:{port}", port=port)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return receiver, server
