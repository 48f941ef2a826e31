"""``/healthz`` (is the process alive?) and ``/readyz`` (can it serve?), Kubernetes style.

::

    from toolkit_batteries.http.health import healthz, readyz

    urlpatterns = [path("healthz", healthz), path("readyz", readyz), ...]

* :func:`healthz` is liveness: it answers ``200 {"status": "ok"}`` without touching any
  server, so a slow database never gets a healthy process restarted.
* :func:`readyz` is readiness: it pings every service the project configures
  (a ``settings.TOOLKIT`` key or a ``<SERVICE>__...`` variable) or installs
  (``toolkit_batteries.<service>`` in ``INSTALLED_APPS``), each instance, plus anything
  else opened since start (plugins): the rows ``toolkit doctor`` shows, so a service
  never used since start still has one. The probes run concurrently, each bounded by a
  timeout, and the answer is cached for :data:`CACHE_SECONDS` (one probe run shared by
  every request in that second, so a load balancer's probes cost nothing)::

      {"status": "unavailable",
       "services": [{"service": "cache", "instance": "default", "adapter": "kvserver",
                     "product": "redis", "status": "error",
                     "error": "service_unavailable", "latency_ms": 1.8}]}

  ``200`` when every row is ``ok``, ``503`` otherwise, so a load balancer stops routing
  to a process whose Redis went away. A row's ``error`` is the error's code
  (``service_unavailable``, ``timeout``) or its class name, never its message: messages
  of driver errors carry hosts, ports and DSNs. The reason goes to the ``toolkit.health``
  log, redacted. ``adapter`` is the canonical (neutral) name settings may use;
  ``product`` is what it talks to (``sqlserver`` -> ``postgres``, ``cdn_a`` ->
  ``cloudflare``), as ``toolkit doctor`` shows it, or the adapter's name when it talks
  to no product (``memory``).

Services are probed the way ``toolkit doctor`` probes them, by
:mod:`toolkit_batteries.core.probe` (``ping()`` where the service has one, its Django
connection for SQL batteries, else a round trip on each client it borrowed). Each row is
a :class:`ServiceCheck`, the shape of a django-health-check backend (``identifier()``,
``check_status()``, ``errors``, ``time_taken``), so a project using that package can
register the same checks with its plugin registry.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

__all__ = ["ServiceCheck", "configured_pairs", "healthz", "readiness", "readyz"]

logger = logging.getLogger("toolkit.health")

#: Seconds one service may take to answer before its row is an error.
TIMEOUT = 2.0
#: Seconds one ``/readyz`` answer is reused for (probes of a load balancer share it).
CACHE_SECONDS = 1.0
_NO_STORE = {"Cache-Control": "no-store"}
#: The clock of the cache (a test injects a fake one).
clock: Callable[[], float] = time.monotonic


class ServiceCheck:
    """Ping one service instance (opening it first if needed); a django-health-check backend."""

    critical_service = True

    def __init__(self, container: Any, service: str, instance: str) -> None:
        self.container = container
        self.service = service
        self.instance = instance
        self.adapter = ""
        self.errors: list[str] = []
        self.time_taken = 0.0

    def identifier(self) -> str:
        """Return ``service`` or ``service/instance`` (the row's name)."""
        return self.service if self.instance == "default" else f"{self.service}/{self.instance}"

    def check_status(self) -> None:
        """Open (already open: a dictionary lookup) and ping the service; raise on failure."""
        if self.service.startswith("plugins."):
            plugin = self.container.plugin(self.service.partition(".")[2], self.instance)
            self.adapter = getattr(type(plugin), "adapter_name", "") or type(plugin).__name__
            ping = getattr(plugin, "ping", None)
            if callable(ping):
                ping()
            return
        from toolkit_batteries.core.probe import probe

        obj = getattr(self.container, self.service)(self.instance)
        self.adapter = getattr(type(obj), "adapter_name", "") or self._configured_adapter()
        probe(self.container, self.service, self.instance)

    def _configured_adapter(self) -> str:
        try:
            return str(self.container.config.service(self.service, self.instance).adapter)
        except Exception:  # a row must never fail on its label
            return ""

    def run_check(self, timeout: float = TIMEOUT) -> None:
        """Run :meth:`check_status` on a daemon thread; record the outcome and the time."""
        from toolkit_batteries.core.probe import bounded

        started = time.perf_counter()
        failure = bounded(self.check_status, timeout, f"toolkit-readyz-{self.service}")
        self.time_taken = time.perf_counter() - started
        if isinstance(failure, TimeoutError) and self.time_taken >= timeout:
            self.errors = ["timeout"]
            logger.warning("readyz: %s did not answer within %gs", self.identifier(), timeout)
        elif failure is not None:
            self.errors = [_code(failure)]
            logger.warning("readyz: %s failed: %s", self.identifier(), _redacted(failure))

    def as_row(self) -> dict[str, Any]:
        """Return the row ``/readyz`` shows: no option value, no exception text."""
        from toolkit_batteries.core.config_display import product_name

        row: dict[str, Any] = {
            "service": self.service,
            "instance": self.instance,
            "adapter": self.adapter,
            "product": product_name(self.adapter, self.service) if self.adapter else "",
            "status": "error" if self.errors else "ok",
            "latency_ms": round(self.time_taken * 1000, 1),
        }
        if self.errors:
            row["error"] = self.errors[0]
        return row


def _code(exc: BaseException) -> str:
    """Name a failure without its message: the toolkit error's code, else the class."""
    code = getattr(exc, "code", None)
    if isinstance(code, str) and code:
        return code
    return type(exc).__name__


def _redacted(exc: BaseException) -> str:
    from toolkit_batteries.core.redaction import redact_string

    return redact_string(f"{type(exc).__name__}: {exc}")


def readiness(
    container: Any = None,
    pairs: Iterable[tuple[str, str]] | None = None,
    *,
    timeout: float = TIMEOUT,
) -> tuple[bool, list[dict[str, Any]]]:
    """Ping ``pairs`` (default: :func:`configured_pairs`) concurrently; return (ok, rows)."""
    if container is None:
        from toolkit_batteries import services

        container = services.container()
    if pairs is None:
        pairs = configured_pairs(container)
    checks = [ServiceCheck(container, service, instance) for service, instance in pairs]
    threads = [
        threading.Thread(target=check.run_check, args=(timeout,), daemon=True) for check in checks
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 1.0)  # run_check bounds itself; this only guards the guard
    rows = [check.as_row() for check in checks]
    return all(row["status"] == "ok" for row in rows), rows


def configured_pairs(container: Any) -> list[tuple[str, str]]:
    """Return every (service, instance) the project configures or installs, then the opened.

    The same services ``toolkit doctor`` checks (:func:`~toolkit_batteries.core.doctor.
    project_services`), each configured instance, in catalog order; then whatever else
    the container opened since start (plugins, an instance only named in code).
    """
    from toolkit_batteries.core.catalog import SERVICES
    from toolkit_batteries.core.doctor import project_services

    configured, installed = project_services()
    wanted = configured | installed
    pairs = [
        (service, instance)
        for service in SERVICES
        if service in wanted
        for instance in container.config.instances(service)
    ]
    pairs += [pair for pair in container.opened() if pair not in pairs]
    return pairs


class _Cache:
    """One readiness answer per container, reused for :data:`CACHE_SECONDS`.

    The lock makes concurrent requests share one probe run instead of starting one each.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.container: Any = None
        self.at = float("-inf")
        self.answer: tuple[bool, list[dict[str, Any]]] = (True, [])

    def get(self, container: Any) -> tuple[bool, list[dict[str, Any]]]:
        with self.lock:
            now = clock()
            if self.container is not container or now - self.at >= CACHE_SECONDS:
                self.answer = readiness(container)
                self.container, self.at = container, clock()
            return self.answer


_cache = _Cache()


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: the process answers HTTP. No I/O, so it never fails because a server did."""
    return JsonResponse({"status": "ok"}, headers=_NO_STORE)


@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: one row per configured service; 200 when all answer, 503 otherwise."""
    from toolkit_batteries import services

    ok, rows = _cache.get(services.container())
    return JsonResponse(
        {"status": "ok" if ok else "unavailable", "services": rows},
        status=200 if ok else 503,
        headers=_NO_STORE,
    )
