"""The OTLP/HTTP receiver refuses what a Collector's ``otlpreceiver`` refuses.

So an exporter that sent the wrong content type, an undecodable or badly compressed
body, or ids of the wrong length would fail its test here instead of passing against a
lenient fake. The OpenTelemetry SDK's own exporter (gzip and deflate) is the reference
client: what it sends must be accepted.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator

import httpx
import pytest
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from .receiver import JSON, PROTOBUF, Receiver

TRACE = bytes(range(1, 17))
SPAN = bytes(range(1, 9))


@pytest.fixture
def strict() -> Iterator[Receiver]:
    with Receiver() as started:
        yield started  # type: ignore[misc]


def export(name: str = "op", *, trace: bytes = TRACE, service: str | None = "orders") -> bytes:
    """Return an ``ExportTraceServiceRequest`` of one span, serialized."""
    message = ExportTraceServiceRequest()
    resource_spans = message.resource_spans.add()
    if service is not None:
        attribute = resource_spans.resource.attributes.add()
        attribute.key, attribute.value.string_value = "service.name", service
    span = resource_spans.scope_spans.add().spans.add()
    span.name, span.trace_id, span.span_id = name, trace, SPAN
    span.kind = Span.SPAN_KIND_INTERNAL
    span.start_time_unix_nano, span.end_time_unix_nano = 10, 20
    return message.SerializeToString()


def post(receiver: Receiver, body: bytes, kind: str = PROTOBUF, **headers: str) -> httpx.Response:
    url = f"http://{receiver.url}/v1/traces"
    return httpx.post(url, content=body, headers={"Content-Type": kind, **headers}, timeout=5)


def status_of(response: httpx.Response) -> status_pb2.Status:
    """Decode the ``google.rpc.Status`` error body in the response's encoding."""
    status = status_pb2.Status()
    if response.headers["content-type"] == JSON:
        from google.protobuf import json_format

        return json_format.Parse(response.text, status)
    status.ParseFromString(response.content)
    return status


def test_a_well_formed_export_is_accepted_and_answered_in_its_encoding(strict):
    response = post(strict, export())
    assert response.status_code == 200 and response.headers["content-type"] == PROTOBUF
    ExportTraceServiceResponse().ParseFromString(response.content)
    [span] = strict.spans()
    assert (span["name"], span["trace_id"], span["resource"]) == (
        "op",
        TRACE.hex(),
        {"service.name": "orders"},
    )
    assert strict.problems == []


def test_other_methods_paths_and_content_types_are_refused_as_plain_text(strict):
    got = httpx.get(f"http://{strict.url}/v1/traces", timeout=5)
    assert (got.status_code, got.text) == (405, "405 method not allowed, supported: [POST]")
    logs = httpx.post(f"http://{strict.url}/v1/spans", content=export(), timeout=5)
    assert logs.status_code == 404
    text = post(strict, export(), kind="text/plain")
    assert text.status_code == 415
    assert text.text == (
        "415 unsupported media type, supported: [application/json, application/x-protobuf]"
    )
    assert strict.spans() == []


def test_an_undecodable_body_is_a_400_status_in_the_requests_encoding(strict):
    garbage = post(strict, b"\xff\xff\xff not protobuf")
    assert garbage.status_code == 400 and garbage.headers["content-type"] == PROTOBUF
    assert status_of(garbage).code == 3  # InvalidArgument
    broken_json = post(strict, b'{"resourceSpans": [', kind=JSON)
    assert broken_json.status_code == 400 and status_of(broken_json).code == 3
    short_id = post(strict, export(trace=b"\x01" * 5))
    assert short_id.status_code == 400
    assert "invalid length for ID" in status_of(short_id).message
    assert strict.spans() == []


def test_compressed_bodies_are_inflated_and_bad_encodings_refused(strict):
    assert post(strict, gzip.compress(export("g")), **{"Content-Encoding": "gzip"}).is_success
    assert post(strict, zlib.compress(export("d")), **{"Content-Encoding": "deflate"}).is_success
    bad_gzip = post(strict, export(), **{"Content-Encoding": "gzip"})
    assert (bad_gzip.status_code, bad_gzip.text) == (400, "gzip: invalid header")
    brotli = post(strict, export(), **{"Content-Encoding": "br"})
    assert (brotli.status_code, brotli.text) == (400, "unsupported Content-Encoding: br")
    assert sorted(span["name"] for span in strict.spans()) == ["d", "g"]


def test_otlp_json_carries_hex_ids(strict):
    document = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "orders"}}]
                },
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": TRACE.hex(),
                                "spanId": SPAN.hex(),
                                "name": "from-json",
                                "kind": 1,
                                "startTimeUnixNano": "10",
                                "endTimeUnixNano": "20",
                            }
                        ]
                    }
                ],
            }
        ]
    }
    accepted = post(strict, json.dumps(document).encode(), kind=JSON)
    assert accepted.status_code == 200 and accepted.headers["content-type"] == JSON
    [span] = strict.spans()
    assert (span["trace_id"], span["span_id"]) == (TRACE.hex(), SPAN.hex())
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "abcd"
    refused = post(strict, json.dumps(document).encode(), kind=JSON)
    assert refused.status_code == 400 and "invalid length for ID" in status_of(refused).message


def test_what_a_collector_takes_but_otlp_forbids_is_recorded_as_a_problem(strict):
    assert post(strict, export(service=None)).status_code == 200
    assert post(strict, export(trace=bytes(16))).status_code == 200
    assert strict.problems == [
        "a resource without service.name",
        "span op: an empty or zero trace or span id",
    ]


@pytest.mark.parametrize("compression", [Compression.Gzip, Compression.Deflate])
def test_the_sdks_own_exporter_is_accepted_compressed(strict, compression):
    exporter = OTLPSpanExporter(
        endpoint=f"http://{strict.url}/v1/traces", compression=compression, timeout=5
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "billing"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        tracer = provider.get_tracer("t")
        with tracer.start_as_current_span("outer"), tracer.start_as_current_span("inner"):
            pass
    finally:
        provider.shutdown()
    [request, _] = strict.exports("/v1/traces")
    assert request.header("content-encoding") == compression.value
    spans = {span["name"]: span for span in strict.spans()}
    assert spans["inner"]["parent_id"] == spans["outer"]["span_id"]
    assert spans["outer"]["resource"]["service.name"] == "billing"
    assert strict.problems == []
