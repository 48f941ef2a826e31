"""Issue 12 defect 11: one error code maps to one HTTP status, everywhere.

On the landed code the idempotency decorator answered 422 ``failed_precondition`` while
the compiler mapped ``failed_precondition`` to 400. Here every battery decorator and
middleware is driven into each of its refusals through Django's real request stack, and
each answer's status is checked against the one table, ``HTTP_STATUS``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import path
from rest_framework.decorators import api_view
from rest_framework.response import Response
from rest_framework.views import APIView

from tests.ports import free_port
from toolkit_batteries import services
from toolkit_batteries.auth.decorators import bearer_required
from toolkit_batteries.core.errors import HTTP_STATUS, http_status
from toolkit_batteries.http.errors import STATUS_CODES, ApiError
from toolkit_batteries.idempotency.decorators import idempotent
from toolkit_batteries.ratelimit.decorators import ratelimit
from toolkit_batteries.ratelimit.drf import RateLimitThrottle
from toolkit_codegen.nodes import ERROR_STATUS

SECRET = "error-codes-test-secret-" + "x" * 32
SCOPE = {"scope": lambda request: "tenant-1"}  # explicit, so anonymous calls are stored


DEAD = {"kvserver": {"addr": f"127.0.0.1:{free_port()}"}}
TOOLKIT = {
    "auth": {"adapter": "jwt", "options": {"jwt": {"secret": SECRET}}},
    "ratelimit": {
        "default": {"adapter": "memory", "options": {"rate": 0.001, "burst": 1}},
        "down": {"adapter": "kvserver", "options": DEAD},
    },
    "idempotency": {
        "default": {"adapter": "memory"},
        "down": {"adapter": "kvserver", "options": DEAD},
    },
}
REST_FRAMEWORK = {"EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler"}

nested: list[Any] = []


@ratelimit(key="ip")
def limited(request):
    return HttpResponse("ok")


@ratelimit(key="ip", instance="down", fail_open=False)
def limited_closed(request):
    return HttpResponse("ok")


@bearer_required(roles=("admin",))
def admin(request):
    return HttpResponse("ok")


@idempotent(required=True, **SCOPE)
def order(request):
    if request.GET.get("nested"):  # the same key again while this request still runs
        nested.append(post("/order?nested=1", key=request.headers["Idempotency-Key"]))
    return HttpResponse("created", status=201)


@idempotent(instance="down", **SCOPE)
def order_down(request):
    return HttpResponse("created", status=201)


class Throttled(APIView):
    throttle_classes = [RateLimitThrottle]

    def get(self, request):
        return Response({"ok": True})


@api_view(["GET"])
def drf_raises(request):
    raise ApiError(400, "failed_precondition", "the cart is empty")


def plain_raises(request, kind):
    from django.core.exceptions import PermissionDenied, RequestDataTooBig
    from django.http import Http404

    raise {
        "missing": Http404(),
        "forbidden": PermissionDenied(),
        "too-big": RequestDataTooBig(),
        "bug": RuntimeError("internal detail"),
        "precondition": ApiError(400, "failed_precondition", "the cart is empty"),
    }[kind]


urlpatterns = [
    path("limited", limited),
    path("limited-closed", limited_closed),
    path("admin", admin),
    path("order", order),
    path("order-down", order_down),
    path("throttled", Throttled.as_view()),
    path("api/drf-raises", drf_raises),
    path("api/plain/<str:kind>", plain_raises),
]

pytestmark = pytest.mark.urls(__name__)


@pytest.fixture(autouse=True)
def configured():
    with override_settings(TOOLKIT=TOOLKIT, REST_FRAMEWORK=REST_FRAMEWORK, MIDDLEWARE=[]):
        services.reset()
        yield
    services.reset()


def post(url: str, key: str | None = None, body: bytes = b"{}", **headers: str):
    if key is not None:
        headers["HTTP_IDEMPOTENCY_KEY"] = key
    return Client().post(url, body, content_type="application/json", **headers)


def agrees(response) -> str:
    """Assert the response's status is the table's for its code; return the code."""
    code = json.loads(response.content)["error"]["code"]
    assert response.status_code == HTTP_STATUS[code], (code, response.status_code)
    return code


def test_the_compiler_and_the_batteries_read_one_table() -> None:
    for code, status in ERROR_STATUS.items():
        assert http_status(code) == status
    assert http_status("failed_precondition") == 400 and http_status("unavailable") == 503
    # The default code of each status names that status back.
    for status, code in STATUS_CODES.items():
        assert HTTP_STATUS[code] == status


def test_ratelimit_decorator_refusals_follow_the_table() -> None:
    client = Client()
    assert client.get("/limited").status_code == 200
    assert agrees(client.get("/limited")) == "resource_exhausted"
    assert agrees(client.get("/limited-closed")) == "unavailable"


def test_ratelimit_throttle_refusal_follows_the_table() -> None:
    client = Client()
    assert client.get("/throttled").status_code == 200
    assert agrees(client.get("/throttled")) == "resource_exhausted"


def test_bearer_decorator_refusals_follow_the_table() -> None:
    assert agrees(Client().get("/admin")) == "unauthenticated"
    token = services.auth().issue("user-1").token
    refused = Client().get("/admin", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert agrees(refused) == "permission_denied"
    boss = services.auth().issue("user-2", roles=["admin"]).token
    assert Client().get("/admin", HTTP_AUTHORIZATION=f"Bearer {boss}").status_code == 200


def test_idempotency_decorator_refusals_follow_the_table() -> None:
    assert agrees(post("/order")) == "invalid_argument"  # the header is required
    assert agrees(post("/order", key="")) == "invalid_argument"
    assert post("/order", key="k-1").status_code == 201
    assert agrees(post("/order", key="k-1", body=b'{"other": 1}')) == "failed_precondition"
    nested.clear()
    assert post("/order?nested=1", key="k-2").status_code == 201
    assert agrees(nested[0]) == "already_exists"
    assert agrees(post("/order-down", key="k-3")) == "unavailable"


def test_a_drf_view_raising_a_schema_code_follows_the_table() -> None:
    assert agrees(Client().get("/api/drf-raises")) == "failed_precondition"


def test_the_json_error_middleware_follows_the_table() -> None:
    middleware = ["toolkit_batteries.http.middleware.JsonErrorMiddleware"]
    expected = {
        "missing": "not_found",
        "forbidden": "permission_denied",
        "too-big": "payload_too_large",
        "bug": "internal",
        "precondition": "failed_precondition",
    }
    with override_settings(MIDDLEWARE=middleware):
        client = Client(raise_request_exception=False)
        for kind, code in expected.items():
            assert agrees(client.get(f"/api/plain/{kind}")) == code
