"""Views and URLs for the decorator, middleware and DRF throttle tests."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path
from django.utils.decorators import method_decorator
from django.views import View
from rest_framework.decorators import api_view
from rest_framework.response import Response
from rest_framework.views import APIView

from toolkit_batteries.auth.decorators import bearer_required
from toolkit_batteries.auth.drf import BearerAuthentication, BearerRequired
from toolkit_batteries.ratelimit.decorators import ratelimit
from toolkit_batteries.ratelimit.drf import RateLimitThrottle


@ratelimit(key="ip")
def login(request):
    return HttpResponse("login ok")


@ratelimit(key="ip")
def search(request):
    return HttpResponse("search ok")


def by_header(request):
    return request.headers.get("X-Client") or None


@ratelimit(key=by_header, instance="strict", cost=2)
def weighted(request):
    return HttpResponse("weighted ok")


@ratelimit(key="ip", fail_open=False)
def closed_on_failure(request):
    return HttpResponse("closed ok")


class ClassView(View):
    @method_decorator(ratelimit(key="ip"))
    def get(self, request):
        return HttpResponse("class ok")


@api_view(["GET"])
@ratelimit(key="ip")
def drf_function(request):
    return Response({"ok": True})


class DrfMethodView(APIView):
    @ratelimit(key="ip")
    def get(self, request):
        return Response({"ok": True})


class ThrottledView(APIView):
    throttle_classes = [RateLimitThrottle]
    ratelimit_instance = "strict"

    def get(self, request):
        return Response({"ok": True})


@bearer_required  # outermost: the limiter below sees the verified caller
@ratelimit(key="user", instance="strict")
def per_user(request):
    return HttpResponse(f"hello {request.user.pk}")


@ratelimit(key="user", instance="strict")  # outermost: runs before authentication
@bearer_required
def per_user_before_auth(request):
    return HttpResponse(f"hello {request.user.pk}")


class PerUserThrottledView(APIView):
    authentication_classes = [BearerAuthentication]
    permission_classes = [BearerRequired]
    throttle_classes = [RateLimitThrottle]
    ratelimit_instance = "strict"
    ratelimit_key = "user"

    def get(self, request):
        return Response({"user": request.user.pk})


def plain(request):
    return HttpResponse("plain ok")


urlpatterns = [
    path("login", login),
    path("search", search),
    path("weighted", weighted),
    path("closed", closed_on_failure),
    path("class", ClassView.as_view()),
    path("drf/function", drf_function),
    path("drf/method", DrfMethodView.as_view()),
    path("drf/throttled", ThrottledView.as_view()),
    path("per-user", per_user),
    path("per-user-before-auth", per_user_before_auth),
    path("drf/per-user", PerUserThrottledView.as_view()),
    path("api/v1/items", plain),
    path("api/v1/auth/login", plain),
    path("other", plain),
]
