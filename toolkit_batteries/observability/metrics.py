"""``/metrics`` in Prometheus text format: what a team scrapes from each web process.

Off by default; one setting turns it on (``TOOLKIT_METRICS = True``; the project
template reads it from the ``TOOLKIT_METRICS`` variable). The template already lists the
middleware and the URL, both inert while it is off (``/metrics`` answers 404)::

    MIDDLEWARE = [..., "toolkit_batteries.observability.metrics.MetricsMiddleware"]
    urlpatterns = [..., path("metrics", metrics_view)]

Series (``prometheus_client``, the ``metrics`` extra, on a registry of its own):

* ``toolkit_http_request_duration_seconds{method, route, status}``: a histogram per URL
  pattern (``v1/widgets/<uuid:id>``, never the path a client sent).
* ``toolkit_operation_duration_seconds{service, instance, operation}`` and
  ``toolkit_operation_errors_total{...}``: every battery operation that leaves the process
  (the spans of :mod:`toolkit_batteries.core.tracing`), timed whether or not a tracer runs.
* ``toolkit_queue_depth{instance, topic}`` and ``toolkit_queue_dead_letters{...}``: read
  at scrape time for the topics of the project's jobs.
* ``toolkit_outbox_pending{instance}`` and ``toolkit_outbox_lag_seconds{instance}`` (age of
  the oldest pending message).
* ``toolkit_scheduler_last_fire_timestamp_seconds{schedule}`` (``<instance>:<name>``):
  from the ``sqlserver`` scheduler's claims table (when the slot was claimed), and for an
  ``embedded`` scheduler from its claims on the lock: the newest slot of each discovered
  schedule whose claim is held (``EmbeddedScheduler.last_fires``; a shared ``kvserver``
  lock shows what every ``schedule:run`` process fired, the ``memory`` lock only this
  process's).

Protected outside development: the request must carry ``Authorization: Bearer <token>``
matching the ``TOOLKIT_METRICS_TOKEN`` variable, or come from an address in Django's
``INTERNAL_IPS``; anything else is ``403`` (no token configured) or ``401``. A scrape
reads each state series within :data:`STATE_TIMEOUT` seconds; a service that fails is
left out and counted in ``toolkit_metrics_collect_errors_total{service}``.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.http import HttpRequest, HttpResponse

__all__ = [
    "SETTING",
    "TOKEN_VARIABLE",
    "MetricsMiddleware",
    "enabled",
    "metrics",
    "metrics_view",
]

logger = logging.getLogger("toolkit.observability")

#: The Django setting that turns ``/metrics`` on.
SETTING = "TOOLKIT_METRICS"
#: The environment variable holding the scrape token (a secret: never a setting).
TOKEN_VARIABLE = "TOOLKIT_METRICS_TOKEN"
#: Seconds a scrape may spend reading one service's state.
STATE_TIMEOUT = 2.0
#: The content type of what ``generate_latest`` writes (text format 0.0.4, which every
#: Prometheus server reads; newer clients label it 1.0.0, which older servers refuse).
TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def enabled() -> bool:
    """Tell whether ``settings.TOOLKIT_METRICS`` is on."""
    from django.conf import settings

    return bool(getattr(settings, SETTING, False))


class Metrics:
    """The registry and its series; one per process (:func:`metrics`)."""

    def __init__(self) -> None:
        try:
            from prometheus_client import CollectorRegistry, Counter, Histogram
        except ImportError:  # pragma: no cover - the extra is part of dev
            from toolkit_batteries.core.errors import MissingExtraError

            raise MissingExtraError(
                "observability", "metrics", "metrics", "prometheus_client"
            ) from None
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Histogram(
            "toolkit_http_request_duration_seconds",
            "Request latency per URL pattern.",
            ["method", "route", "status"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.operations = Histogram(
            "toolkit_operation_duration_seconds",
            "Latency of battery operations that leave the process.",
            ["service", "instance", "operation"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.errors = Counter(
            "toolkit_operation_errors",
            "Battery operations that raised.",
            ["service", "instance", "operation"],
            registry=self.registry,
        )
        self.collect_errors = Counter(
            "toolkit_metrics_collect_errors",
            "State series a scrape could not read.",
            ["service"],
            registry=self.registry,
        )
        self.registry.register(StateCollector(self))

    def observe_operation(
        self, service: str, instance: str, op: str, seconds: float, failed: bool
    ) -> None:
        """Record one battery operation (the tracing hook's recorder)."""
        self.operations.labels(service, instance, op).observe(seconds)
        if failed:
            self.errors.labels(service, instance, op).inc()

    def render(self) -> tuple[bytes, str]:
        """Return the exposition text and its content type."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry), TEXT_FORMAT


_instance: Metrics | None = None
_guard = threading.Lock()


def metrics() -> Metrics:
    """Return this process's metrics, creating them (and timing operations) on first use."""
    global _instance
    with _guard:
        if _instance is None:
            from toolkit_batteries.core import tracing

            _instance = Metrics()
            tracing.set_recorder(_instance.observe_operation)
        return _instance


class StateCollector:
    """Queue, outbox and scheduler state, read when Prometheus scrapes."""

    def __init__(self, owner: Metrics) -> None:
        self.owner = owner

    def describe(self) -> list[Any]:
        return []  # families are built per scrape; nothing to check at registration

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        from toolkit_batteries.core.doctor import project_services

        configured, installed = project_services()
        wanted = configured | installed
        readers: list[tuple[str, Callable[[], list[Any]]]] = []
        if "queue" in wanted:
            readers.append(("queue", lambda: _queue_families(GaugeMetricFamily)))
        if "outbox" in wanted:
            readers.append(("outbox", lambda: _outbox_families(GaugeMetricFamily)))
        if "scheduler" in wanted:
            readers.append(("scheduler", lambda: _scheduler_families(GaugeMetricFamily)))
        for service, read in readers:
            families = _bounded(read, service)
            if families is None:
                self.owner.collect_errors.labels(service).inc()
                continue
            yield from families


def _bounded(read: Callable[[], list[Any]], service: str) -> list[Any] | None:
    """Run ``read`` within :data:`STATE_TIMEOUT`; ``None`` when it failed or took longer."""
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(read())
        except Exception as exc:  # reported as a collect error, never a 500
            logger.warning("metrics: reading %s state failed (%s)", service, type(exc).__name__)
        finally:
            from django.db import connections

            connections.close_all()  # this thread's connections, not the request's

    worker = threading.Thread(target=target, name=f"toolkit-metrics-{service}", daemon=True)
    worker.start()
    worker.join(STATE_TIMEOUT)
    return outcome[0] if outcome and not worker.is_alive() else None


def _services_config() -> Any:
    from toolkit_batteries import services

    return services.container().config


def _queue_families(gauge: Any) -> list[Any]:
    from toolkit_batteries import services
    from toolkit_batteries.queue.jobs import import_job_modules, registry
    from toolkit_batteries.queue.jobs.dispatch import topic_for

    import_job_modules()
    topics = sorted({topic_for(job.queue) for job in registry} | {topic_for("default")})
    depth = gauge(
        "toolkit_queue_depth", "Messages waiting (ready or delayed).", labels=["instance", "topic"]
    )
    dead = gauge(
        "toolkit_queue_dead_letters",
        "Dead messages (at most 1000 counted).",
        labels=["instance", "topic"],
    )
    for instance in _services_config().instances("queue"):
        queue = services.queue(instance)
        for topic in topics:
            depth.add_metric([instance, topic], queue.size(topic))
            dead.add_metric([instance, topic], len(queue.dead_messages(topic, limit=1000)))
    return [depth, dead]


def _outbox_families(gauge: Any) -> list[Any]:
    from toolkit_batteries import services

    pending = gauge("toolkit_outbox_pending", "Messages not yet relayed.", labels=["instance"])
    lag = gauge(
        "toolkit_outbox_lag_seconds", "Age of the oldest pending message.", labels=["instance"]
    )
    for instance in _services_config().instances("outbox"):
        status = services.outbox(instance).status()
        pending.add_metric([instance], status.pending)
        lag.add_metric([instance], status.oldest_pending)
    return [pending, lag]


def _scheduler_families(gauge: Any) -> list[Any]:
    from django.db.models import Max

    from toolkit_batteries.scheduler.models import SchedulerClaim

    last = gauge(
        "toolkit_scheduler_last_fire_timestamp_seconds",
        "When each schedule last fired (epoch seconds), from the claims table.",
        labels=["schedule"],
    )
    rows = SchedulerClaim.objects.values("name").annotate(last=Max("claimed_at"))
    latest = {row["name"]: float(row["last"]) for row in rows}
    for label, when in _embedded_last_fires().items():
        latest[label] = max(when, latest.get(label, when))
    for label in sorted(latest):
        last.add_metric([label], latest[label])
    return [last]


def _embedded_last_fires() -> dict[str, float]:
    """Return ``<instance>:<schedule>`` -> epoch of its newest claimed slot, embedded only."""
    from toolkit_batteries import services
    from toolkit_batteries.scheduler.discovery import discover_schedules

    schedules = discover_schedules()
    found: dict[str, float] = {}
    if not schedules:
        return found
    for instance in _services_config().instances("scheduler"):
        scheduler = services.scheduler(instance)
        if getattr(scheduler, "adapter_name", "") != "embedded":
            continue  # sqlserver: its claims table above
        for name, slot in scheduler.last_fires(schedules).items():
            found[f"{instance}:{name}"] = slot.timestamp()
    return found


def _allowed(request: HttpRequest) -> int:
    """Return 0 when the request may scrape, else the status to refuse it with."""
    from django.conf import settings

    from toolkit_batteries.serving import is_development

    if is_development():
        return 0
    if request.META.get("REMOTE_ADDR") in set(getattr(settings, "INTERNAL_IPS", ()) or ()):
        return 0
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        return 403
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
        return 0
    return 401


def metrics_view(request: HttpRequest) -> HttpResponse:
    """Serve the Prometheus text; 404 while off, 401/403 when not allowed to scrape."""
    if not enabled() or request.method not in ("GET", "HEAD"):
        return HttpResponse(status=404 if not enabled() else 405)
    refused = _allowed(request)
    if refused:
        response = HttpResponse(status=refused)
        if refused == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body, content_type = metrics().render()
    return HttpResponse(body, content_type=content_type, headers={"Cache-Control": "no-store"})


class MetricsMiddleware:
    """Time each request by its URL pattern; does nothing while metrics are off."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not enabled():
            return self.get_response(request)
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = getattr(match, "route", None) or "<unmatched>"
        metrics().requests.labels(request.method or "", route, str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response
