"""Tenant benchmark: the middleware's cost per request against the same plain view.

Two WSGI handlers (Django's own ``WSGIHandler``, the whole request path: signals, URL
resolution, the view, the response) serve one plain view in this process; one has no
middleware, the other only ``TenantMiddleware``. Each figure is microseconds per request,
best of several interleaved repeats; the overhead is the difference over the plain
request. Measured for the ``header`` adapter (an ``X-Tenant-ID`` checked against an
``allowed`` list) and the ``single`` default. Target: under 5 % of the plain view.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from typing import Any

from django.http import HttpResponse
from django.urls import path

from bench.foundation import Result


def plain(request: Any) -> HttpResponse:
    """Answer "ok": the plain view both handlers serve."""
    return HttpResponse("ok")


urlpatterns = [path("plain", plain)]

MIDDLEWARE = "toolkit_batteries.tenant.middleware.TenantMiddleware"


def _environ(extra: dict[str, str]) -> dict[str, Any]:
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/plain",
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        **extra,
    }


def _per_request_us(handler: Callable[..., Any], extra: dict[str, str], n: int) -> float:
    def start_response(status: str, headers: list[Any]) -> None:
        assert status.startswith("200"), status

    environs = [_environ(extra) for _ in range(n)]
    started = time.perf_counter()
    for environ in environs:
        response = handler(environ, start_response)
        response.close()
    return (time.perf_counter() - started) / n * 1e6


def _overhead(name: str, tenant_block: dict[str, Any], extra: dict[str, str]) -> Result:
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import override_settings

    from toolkit_batteries import services

    common = {"ROOT_URLCONF": "bench.tenant", "ALLOWED_HOSTS": ["*"], "DEBUG": False}
    with override_settings(TOOLKIT={"tenant": tenant_block}, **common):
        with override_settings(MIDDLEWARE=[]):
            base_handler = WSGIHandler()
        with override_settings(MIDDLEWARE=[MIDDLEWARE]):
            tenant_handler = WSGIHandler()
        services.tenant()  # opened once, as in a serving process
        for handler in (base_handler, tenant_handler):
            _per_request_us(handler, extra, 2000)  # warm up
        ours = base = float("inf")
        for _ in range(9):
            base = min(base, _per_request_us(base_handler, extra, 5000))
            ours = min(ours, _per_request_us(tenant_handler, extra, 5000))
    overhead = (ours - base) / base
    return Result(
        name=f"tenant middleware ({name}), overhead {overhead:+.1%}",
        value=ours,
        baseline=base,
        unit="us/request",
        target="< 5 % over the plain view",
        met=overhead < 0.05,
    )


def bench_header() -> Result:
    """Time a request through TenantMiddleware (header adapter) against the plain view."""
    block = {"adapter": "header", "options": {"allowed": ["acme", "globex"]}}
    return _overhead("header", block, {"HTTP_X_TENANT_ID": "acme"})


def bench_single() -> Result:
    """Time a request through TenantMiddleware (single adapter) against the plain view."""
    return _overhead("single", {"adapter": "single"}, {})


BENCHMARKS = (bench_header, bench_single)
