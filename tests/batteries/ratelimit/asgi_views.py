"""Async views for the ASGI tests: ``@ratelimit``, the middleware, ``Policy.call``."""

from __future__ import annotations

import asyncio
import threading

from django.http import HttpResponse, JsonResponse
from django.urls import path

from toolkit_batteries import services
from toolkit_batteries.ratelimit.decorators import ratelimit
from toolkit_batteries.resilience.errors import OperationTimeoutError


def _loop_thread() -> str:
    """Name the thread running the view: the event loop's, for a true async view."""
    asyncio.get_running_loop()  # raises outside a running loop
    return threading.current_thread().name


@ratelimit(key="ip")
async def limited(request):
    return HttpResponse(f"async ok on {_loop_thread()}")


async def behind_middleware(request):
    return HttpResponse(f"middleware ok on {_loop_thread()}")


async def double(value: int) -> int:
    await asyncio.sleep(0.01)
    return value * 2


async def guarded(request):
    value = await services.resilience().call(double, 21)
    return JsonResponse({"value": value, "thread": _loop_thread()})


async def too_slow(request):
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        await services.resilience("fast").call(asyncio.sleep, 30)
    except OperationTimeoutError as exc:
        return JsonResponse(
            {"error": type(exc).__name__, "elapsed": loop.time() - started}, status=504
        )
    return JsonResponse({"error": None}, status=200)


urlpatterns = [
    path("limited", limited),
    path("mw/page", behind_middleware),
    path("guarded", guarded),
    path("too-slow", too_slow),
]
