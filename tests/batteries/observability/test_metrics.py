"""``/metrics``: Prometheus text a real parser reads, off by default, protected in production.

Real services: the queue on the machine's Redis (depth and dead letters read at scrape
time, its operations timed through the battery spans), the outbox and scheduler tables
in the test database. The exposition is parsed by ``prometheus_client.parser``.
"""

from __future__ import annotations

import time
import uuid

import pytest
from django.conf import settings
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from tests.batteries.queue.conftest import drop_redis_prefix
from toolkit_batteries import services
from toolkit_batteries.scheduler import Schedule

REDIS = "redis://127.0.0.1:6379/0"
URLS = "tests.batteries.observability.metrics_urls"
PING = "tests.batteries.scheduler.jobs_fixture.ping"
MIDDLEWARE = [*settings.MIDDLEWARE, "toolkit_batteries.observability.metrics.MetricsMiddleware"]


def samples(text: str) -> dict[str, list]:
    """Return every sample of the exposition, by sample name."""
    found: dict[str, list] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(sample)
    return found


@pytest.fixture(autouse=True)
def fresh_metrics(monkeypatch):
    """Each test starts without metrics; the process-wide recorder is removed afterwards."""
    from toolkit_batteries.core import tracing
    from toolkit_batteries.observability import metrics

    monkeypatch.setattr(metrics, "_instance", None)
    yield
    tracing.set_recorder(None)


@pytest.fixture
def redis_queue():
    prefix = f"metrics-{uuid.uuid4().hex}:"
    toolkit = {
        "queue": {"adapter": "kvserver", "options": {"url": REDIS, "prefix": prefix}},
        "outbox": {"adapter": "memory"},
    }
    services.close()
    with override_settings(TOOLKIT=toolkit, ROOT_URLCONF=URLS, MIDDLEWARE=MIDDLEWARE):
        yield
    services.close()
    drop_redis_prefix(REDIS, prefix)


def test_metrics_are_off_by_default(redis_queue):
    assert Client().get("/metrics").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_scrape_shows_request_operation_queue_outbox_and_scheduler_series(redis_queue, monkeypatch):
    from toolkit_batteries.queue.jobs.dispatch import topic_for
    from toolkit_batteries.scheduler.models import SchedulerClaim

    monkeypatch.setenv("TOOLKIT_ENV", "development")
    fired_at = time.time() - 60
    SchedulerClaim.objects.create(
        name="default:digest", slot="2026-01-01T00:00Z", claimed_at=fired_at, claimed_by="h:1:t"
    )
    with override_settings(TOOLKIT_METRICS=True):
        assert Client().get("/healthz").status_code == 200
        queue = services.queue()
        topic = topic_for("default")
        queue.push(topic, b"one")
        queue.push(topic, b"two")
        popped = queue.pop(topic, timeout=1)
        assert popped is not None
        queue.dead(popped, "boom")
        response = Client().get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    found = samples(response.content.decode())

    requests = found["toolkit_http_request_duration_seconds_count"]
    assert any(
        s.labels == {"method": "GET", "route": "healthz", "status": "200"} and s.value == 1
        for s in requests
    ), requests
    pushes = [
        s
        for s in found["toolkit_operation_duration_seconds_count"]
        if (s.labels["service"], s.labels["instance"]) == ("queue", "default")
        and "push" in s.labels["operation"]
    ]
    assert pushes and sum(s.value for s in pushes) >= 2
    depth = {s.labels["topic"]: s.value for s in found["toolkit_queue_depth"]}
    dead = {s.labels["topic"]: s.value for s in found["toolkit_queue_dead_letters"]}
    assert (depth[topic], dead[topic]) == (1, 1)
    assert [s.value for s in found["toolkit_outbox_pending"]] == [0]
    assert [s.value for s in found["toolkit_outbox_lag_seconds"]] == [0]
    last = found["toolkit_scheduler_last_fire_timestamp_seconds"]
    assert [(s.labels["schedule"], round(s.value)) for s in last] == [
        ("default:digest", round(fired_at))
    ]


def test_operation_errors_are_counted_per_service_and_instance(redis_queue, monkeypatch):
    from toolkit_batteries.observability.metrics import metrics

    monkeypatch.setenv("TOOLKIT_ENV", "development")
    toolkit = {"lock": {"adapter": "kvserver", "options": {"addr": "127.0.0.1:1"}}}
    with override_settings(TOOLKIT_METRICS=True, TOOLKIT=toolkit):
        metrics()  # on, as the middleware turns it on at the first request
        with pytest.raises(Exception):  # noqa: B017 - the driver's connection error
            services.lock().acquire("k", ttl=5)
        found = samples(Client().get("/metrics").content.decode())
    errors = [
        s
        for s in found["toolkit_operation_errors_total"]
        if (s.labels["service"], s.labels["instance"]) == ("lock", "default")
    ]
    assert errors and errors[0].value >= 1


def test_outside_development_a_scrape_needs_the_token(redis_queue, monkeypatch):
    monkeypatch.delenv("TOOLKIT_ENV", raising=False)
    monkeypatch.delenv("TOOLKIT_METRICS_TOKEN", raising=False)
    with override_settings(TOOLKIT_METRICS=True, DEBUG=False, INTERNAL_IPS=[]):
        assert Client().get("/metrics").status_code == 403  # no token configured: closed
        monkeypatch.setenv("TOOLKIT_METRICS_TOKEN", "scrape-token-0123456789")
        refused = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong")
        assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
        allowed = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-token-0123456789")
        assert allowed.status_code == 200
    with override_settings(TOOLKIT_METRICS=True, DEBUG=False, INTERNAL_IPS=["127.0.0.1"]):
        assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200


def test_outbox_lag_is_the_age_of_the_oldest_pending_message(redis_queue, monkeypatch):
    monkeypatch.setenv("TOOLKIT_ENV", "development")
    outbox = services.outbox()
    now = [1_800_000_000.0]
    outbox.clock = lambda: now[0]  # the outbox's own injectable clock
    outbox.publish("orders.created", {"n": 1})
    now[0] += 30
    outbox.publish("orders.created", {"n": 2})
    now[0] += 12
    with override_settings(TOOLKIT_METRICS=True):
        found = samples(Client().get("/metrics").content.decode())
    assert [s.value for s in found["toolkit_outbox_pending"]] == [2]
    assert [(s.labels, s.value) for s in found["toolkit_outbox_lag_seconds"]] == [
        ({"instance": "default"}, 42)
    ]


class _Recorder:
    """The job dispatcher of the other ``schedule:run`` process: it only counts."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def dispatch(self, job, args, kwargs) -> str:
        self.calls.append(getattr(job, "name", str(job)))
        return str(len(self.calls))


@pytest.mark.django_db(transaction=True)
def test_the_embedded_scheduler_shows_its_last_fires_from_the_lock_claims(monkeypatch):
    """Another process fired on a shared kvserver lock; the web process reads its claims."""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from toolkit_batteries.core.config import Config
    from toolkit_batteries.core.container import Container

    monkeypatch.setenv("TOOLKIT_ENV", "development")
    prefix = f"metrics-sched-{uuid.uuid4().hex}:"
    toolkit = {
        "scheduler": {"adapter": "embedded"},
        "lock": {"adapter": "kvserver", "options": {"url": REDIS, "prefix": prefix}},
    }
    now = datetime.now(UTC)
    local = now.astimezone(ZoneInfo(settings.TIME_ZONE))  # cron runs in the project's zone
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0).astimezone(UTC)
    this_hour = now.replace(minute=0, second=0, microsecond=0)
    recorder = _Recorder()
    services.close()
    try:
        # The `schedule:run` process: its own container on the same lock server.
        with Container(Config.load(toolkit, {})) as other:
            scheduler = other.scheduler()
            scheduler.dispatcher = recorder
            scheduler.add(Schedule("fixture-hourly", "0 * * * *", PING))
            scheduler.add(Schedule("fixture-daily", "@daily", PING))
            scheduler.add(Schedule("never-fired", "0 0 1 1 *", PING))
            scheduler.run_pending(now=midnight)  # both fire for today's first slot
            scheduler.run_pending(now=this_hour)  # the hourly one again (same slot at 00h)
        assert recorder.calls
        with override_settings(
            TOOLKIT=toolkit,
            TOOLKIT_SCHEDULES=["tests.batteries.scheduler.schedules_fixture"],
            TOOLKIT_METRICS=True,
            ROOT_URLCONF=URLS,
            MIDDLEWARE=MIDDLEWARE,
        ):
            response = Client().get("/metrics")
        assert response.status_code == 200
        found = samples(response.content.decode())
        last = {
            s.labels["schedule"]: s.value
            for s in found["toolkit_scheduler_last_fire_timestamp_seconds"]
        }
        assert last == {
            "default:fixture-daily": midnight.timestamp(),
            "default:fixture-hourly": this_hour.timestamp(),
        }
        errors = found.get("toolkit_metrics_collect_errors_total", [])
        assert not [s for s in errors if s.labels.get("service") == "scheduler" and s.value]
    finally:
        services.close()
        drop_redis_prefix(REDIS, prefix)
