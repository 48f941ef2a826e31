"""What only the ``otlp`` adapter has: the wire format, headers, sampling, the refusals,
the metrics export and the Django instrumentation, against a local OTLP/HTTP receiver."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.test import Client

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container
from toolkit_batteries.core.errors import InvalidOptionsError

from .conftest import SECRET, otlp_options
from .receiver import Receiver


def open_otlp(options: dict[str, Any], instance: str = "default") -> tuple[Container, Any]:
    container = Container(
        Config.load({"observability": {instance: {"adapter": "otlp", "options": options}}}, {})
    )
    return container, container.observability(instance)


def test_spans_arrive_as_protobuf_with_headers_and_resource(
    receiver: Receiver, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    container, obs = open_otlp(otlp_options(receiver, verbose=True), instance="edge")
    try:
        with obs.operation("cache", "default", "get", key="user:1"), obs.span("decode"):
            pass
        assert obs.flush(5.0)
        [request] = receiver.exports("/v1/traces")
        assert request.content_type == "application/x-protobuf"
        assert request.headers["x-api-key"] == SECRET
        spans = {s["name"]: s for s in receiver.spans()}
        assert spans["decode"]["parent_id"] == spans["cache.get"]["span_id"]
        resource = spans["cache.get"]["resource"]
        assert resource["service.name"] == "orders"
        assert resource["toolkit.instance"] == "edge"
        assert resource["service.instance.id"]
        assert spans["cache.get"]["attributes"] == {
            "toolkit.service": "cache",
            "toolkit.instance": "default",
            "key": "user:1",
        }
        assert SECRET not in repr(obs)
    finally:
        container.close()
    # verbose logging was on, and the header still never reached a log line or stdout
    assert caplog.records, "verbose should have logged something"
    assert SECRET not in caplog.text
    assert SECRET not in capsys.readouterr().out


def test_metrics_arrive_with_values_and_attributes(receiver: Receiver) -> None:
    container, obs = open_otlp(otlp_options(receiver))
    try:
        obs.add("jobs.pushed", 2, queue="emails")
        obs.add("jobs.pushed", 3, queue="emails")
        obs.record("job.seconds", 0.5)
        obs.record("job.seconds", 1.5)
        assert obs.flush(5.0)
        [request, *_] = receiver.exports("/v1/metrics")
        assert request.headers["x-api-key"] == SECRET
        metrics = receiver.metrics()
        assert metrics["jobs.pushed"][-1] == (5, {"queue": "emails"})
        assert metrics["job.seconds"][-1] == ((2, 2.0), {})
    finally:
        container.close()


def test_close_exports_what_is_buffered(receiver: Receiver) -> None:
    container, obs = open_otlp(otlp_options(receiver))
    with obs.span("last-words"):
        pass
    container.close()
    assert [s["name"] for s in receiver.spans()] == ["last-words"]


def test_sample_ratio_drops_unsampled_traces_and_their_children(receiver: Receiver) -> None:
    container, obs = open_otlp(otlp_options(receiver, sample_ratio=1e-12))
    try:
        for _ in range(50):
            with obs.span("rare"), obs.span("rare.child"):
                pass
        obs.add("still.counted", 1)
        assert obs.flush(5.0)
        assert receiver.spans() == []
        assert receiver.metrics()["still.counted"][-1][0] == 1
    finally:
        container.close()


def test_attr_value_limit_caps_strings(receiver: Receiver) -> None:
    container, obs = open_otlp(otlp_options(receiver, attr_value_limit=10))
    try:
        with obs.span("capped", text="y" * 50) as span:
            span.set_attribute("later", "z" * 50)
        obs.flush(5.0)
        [span] = receiver.spans()
        assert span["attributes"] == {"text": "y" * 10, "later": "z" * 10}
    finally:
        container.close()


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"endpoint": ""}, "endpoint"),
        ({"endpoint": "collector.example.com:4318", "insecure": True}, "insecure"),
        ({"endpoint": "http://10.0.0.7:4318"}, "insecure"),
        ({"endpoint": f"https://user:{SECRET}@collector.example.com"}, "endpoint"),
        ({"endpoint": "collector.example.com:4318/v1/traces"}, "endpoint"),
        ({"endpoint": "ftp://collector.example.com"}, "endpoint"),
        ({"endpoint": "collector.example.com:4318", "cert_file": "/tmp/c.pem"}, "key_file"),
        ({"endpoint": "collector.example.com:4318", "ca_file": "/nonexistent/ca.pem"}, "ca_file"),
    ],
)
def test_refused_settings_name_the_field_never_the_value(
    options: dict[str, Any], field: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    options = {"headers": {"authorization": SECRET}, **options}
    with pytest.raises(InvalidOptionsError) as info:
        open_otlp(options)
    assert info.value.field == field
    assert "observability.default" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in caplog.text


def test_https_endpoint_never_sends_plaintext(receiver: Receiver) -> None:
    """Without insecure the exporter speaks TLS; the plaintext receiver gets nothing."""
    options = otlp_options(receiver, insecure=False)
    container, obs = open_otlp(options)
    try:
        with obs.span("tls-only"):
            pass
        obs.flush(5.0)  # the export fails its TLS handshake and is logged by the SDK
        assert receiver.requests() == []
    finally:
        container.close()


def test_django_requests_become_server_spans(receiver: Receiver) -> None:
    container, obs = open_otlp(otlp_options(receiver))
    try:
        obs.instrument("django")
        response = Client().get("/healthz")
        assert response.status_code == 200
        with obs.span("after"):
            pass
        assert obs.flush(5.0)
        spans = {s["name"]: s for s in receiver.spans()}
        server = next(s for name, s in spans.items() if "healthz" in name or name == "GET")
        assert server["parent_id"] is None
        assert server["resource"]["service.name"] == "orders"
        assert any(v == 200 for v in server["attributes"].values())
    finally:
        container.close()
    # uninstrumented at close: a later request emits nothing
    before = len(receiver.spans())
    Client().get("/healthz")
    assert len(receiver.spans()) == before


def test_unknown_instrumentation_is_refused(receiver: Receiver) -> None:
    container, obs = open_otlp(otlp_options(receiver))
    try:
        with pytest.raises(ValueError):
            obs.instrument("nosuchlib")
    finally:
        container.close()


def test_redis_commands_become_child_spans(receiver: Receiver, redis_url: str) -> None:
    import redis

    container, obs = open_otlp(otlp_options(receiver))
    client = redis.Redis.from_url(redis_url)
    try:
        obs.instrument("redis")
        with obs.operation("cache", "default", "set"):
            client.set("toolkit-observability-test", "1", ex=5)
        assert obs.flush(5.0)
        spans = receiver.spans()
        [parent] = [s for s in spans if s["name"] == "cache.set"]
        children = [s for s in spans if s["parent_id"] == parent["span_id"]]
        assert [c["name"] for c in children] == ["SET"]
        assert children[0]["trace_id"] == parent["trace_id"]
    finally:
        client.delete("toolkit-observability-test")
        container.close()
        client.close()


def test_verbose_levels_are_restored_at_close(receiver: Receiver) -> None:
    before = logging.getLogger("opentelemetry").level
    container, _ = open_otlp(otlp_options(receiver, verbose=True))
    assert logging.getLogger("opentelemetry").level == logging.DEBUG
    container.close()
    assert logging.getLogger("opentelemetry").level == before


def test_psycopg_queries_become_child_spans(receiver: Receiver, postgres_dsn: str) -> None:
    import psycopg

    container, obs = open_otlp(otlp_options(receiver))
    try:
        obs.instrument("psycopg")
        # connect after instrumenting: the instrumentation wraps psycopg.connect
        with (
            psycopg.connect(postgres_dsn) as connection,
            obs.operation("db", "default", "fetch_value"),
        ):
            assert connection.execute("SELECT 41 + 1").fetchone() == (42,)
        assert obs.flush(5.0)
        spans = receiver.spans()
        [parent] = [s for s in spans if s["name"] == "db.fetch_value"]
        [query] = [s for s in spans if s["parent_id"] == parent["span_id"]]
        assert query["name"] == "SELECT"
        assert query["attributes"]["db.system"] == "postgresql"
    finally:
        container.close()


def test_celery_tasks_become_spans_in_the_callers_trace(receiver: Receiver) -> None:
    from celery import Celery

    app = Celery("observability-test", set_as_current=False)
    app.conf.task_always_eager = True

    @app.task(name="reports.build")
    def build(rows: int) -> int:
        return rows * 2

    container, obs = open_otlp(otlp_options(receiver))
    try:
        obs.instrument("celery")
        with obs.span("request"):
            assert build.delay(21).get(timeout=5) == 42
        assert obs.flush(5.0)
        spans = receiver.spans()
        [request] = [s for s in spans if s["name"] == "request"]
        [run] = [s for s in spans if s["name"] == "run/reports.build"]
        assert run["trace_id"] == request["trace_id"]
        assert run["attributes"]["celery.task_name"] == "reports.build"
    finally:
        container.close()
