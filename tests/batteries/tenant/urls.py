"""Views the tenant tests route through the real request stack (sync and async)."""

from __future__ import annotations

from django.core.cache import caches
from django.http import JsonResponse
from django.urls import path

from toolkit_batteries.tenant import current_tenant, tenant_prefix


def _body(request, cached):
    return {
        "tenant": getattr(request, "tenant", "<unset>"),
        "current": current_tenant(),
        "prefix": tenant_prefix("media"),
        "cached": cached,
    }


def whoami(request):
    cache = caches["default"]
    if request.method == "POST":
        cache.set("plan", request.POST["plan"], 30)
    return JsonResponse(_body(request, cache.get("plan")))


async def awhoami(request):
    return JsonResponse(_body(request, None))


def healthz(request):
    return JsonResponse({"tenant": getattr(request, "tenant", "<unset>")})


urlpatterns = [
    path("whoami", whoami),
    path("awhoami", awhoami),
    path("healthz", healthz),
]
