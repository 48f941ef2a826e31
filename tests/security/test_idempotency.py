"""Issue 12 defect 1 (idempotency replays one caller's response to another) and #10 (the
memory store was bounded by count, not bytes).

On the landed code the scope came from ``request.user``, which the toolkit's bearer auth
sets only inside the view: under ``IdempotencyMiddleware``, ``@idempotent`` outside
``@bearer_required`` or around a DRF view, two users (or a user and an anonymous caller)
sending the same ``Idempotency-Key`` and body shared one stored response, and an
anonymous 401 was replayed to the real user. Here every arrangement the docs show is
driven through Django's real request stack with real bearer tokens minted and verified
by the ``auth`` battery.
"""

from __future__ import annotations

import secrets

import pytest
from django.http import HttpResponse, JsonResponse
from django.test import Client, override_settings
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from toolkit_batteries import services
from toolkit_batteries.auth.decorators import bearer_required
from toolkit_batteries.auth.drf import BearerAuthentication, BearerRequired
from toolkit_batteries.idempotency.adapters.memory import RECORD_OVERHEAD, MemoryIdempotency
from toolkit_batteries.idempotency.decorators import idempotent

TOOLKIT = {
    "auth": {"adapter": "jwt", "options": {"jwt": {"secret": secrets.token_urlsafe(40)}}},
    "idempotency": {"adapter": "memory"},
}
MIDDLEWARE = "toolkit_batteries.idempotency.decorators.IdempotencyMiddleware"
#: The status the next request of a ``/status`` view answers (then 201).
queued: list[int] = []


def created(request):
    """Answer 201 with who asked (a fresh order number each run)."""
    created.runs += 1  # type: ignore[attr-defined]
    return JsonResponse({"by": request.user.id, "run": created.runs}, status=201)  # type: ignore[attr-defined]


created.runs = 0  # type: ignore[attr-defined]


class Orders(APIView):
    authentication_classes = [BearerAuthentication]
    permission_classes = [BearerRequired]

    def post(self, request):
        created.runs += 1  # type: ignore[attr-defined]
        return Response({"by": request.user.id, "run": created.runs}, status=201)  # type: ignore[attr-defined]


def status_view(request):
    return HttpResponse(b"", status=queued.pop(0)) if queued else created(request)


urlpatterns = [
    path("plain", bearer_required(created)),
    path("outside", idempotent(bearer_required(created))),
    path("inside", bearer_required(idempotent(created))),
    path("admin-only", idempotent(bearer_required(roles=("admin",))(created))),
    path("drf", idempotent(Orders.as_view())),
    path("drf-plain", Orders.as_view()),
    path("status", idempotent(bearer_required(status_view))),
]
pytestmark = pytest.mark.urls(__name__)

#: Arrangement -> (URL, whether the middleware is installed).
ARRANGEMENTS = {
    "middleware": ("/plain", True),
    "decorator outside bearer_required": ("/outside", False),
    "decorator inside bearer_required": ("/inside", False),
    "decorator around a DRF view": ("/drf", False),
    "middleware and a DRF view": ("/drf-plain", True),
}


@pytest.fixture(params=list(ARRANGEMENTS))
def url(request):
    where, middleware = ARRANGEMENTS[request.param]
    stack = [MIDDLEWARE] if middleware else []
    with override_settings(TOOLKIT=TOOLKIT, MIDDLEWARE=stack):
        services.reset()
        yield where
    services.reset()


def bearer(subject: str, roles: tuple[str, ...] = ()) -> str:
    return "Bearer " + services.auth().issue(subject, roles=roles).token


def post(url: str, authorization: str | None, key: str = "same-key"):
    headers = {"HTTP_IDEMPOTENCY_KEY": key}
    if authorization is not None:
        headers["HTTP_AUTHORIZATION"] = authorization
    return Client().post(url, b'{"qty": 1}', content_type="application/json", **headers)


def test_two_users_with_the_same_key_and_body_get_their_own_responses(url):
    alice = post(url, bearer("alice"))
    bob = post(url, bearer("bob"))
    assert (alice.status_code, bob.status_code) == (201, 201)
    assert alice.json()["by"] == "alice" and bob.json()["by"] == "bob"
    assert "Idempotent-Replayed" not in bob
    again = post(url, bearer("alice"))  # a fresh token of the same subject replays
    assert again["Idempotent-Replayed"] == "true" and again.json() == alice.json()


def test_anonymous_response_is_never_replayed_to_a_user(url):
    for refused in (None, "Bearer not-a-token", "Basic dXNlcjpwYXNz"):
        assert post(url, refused).status_code == 401
        assert post(url, refused).status_code == 401
    user = post(url, bearer("carol"))
    assert user.status_code == 201 and user.json()["by"] == "carol"
    assert "Idempotent-Replayed" not in user


def test_a_forbidden_answer_is_not_replayed_once_the_role_is_granted():
    with override_settings(TOOLKIT=TOOLKIT, MIDDLEWARE=[]):
        services.reset()
        assert post("/admin-only", bearer("dave")).status_code == 403
        granted = post("/admin-only", bearer("dave", roles=("admin",)))
        assert granted.status_code == 201 and "Idempotent-Replayed" not in granted
    services.reset()


@pytest.mark.parametrize("status", [401, 403, 408, 429, 500, 503])
def test_refusal_timeout_overload_and_server_errors_are_never_stored(status):
    with override_settings(TOOLKIT=TOOLKIT, MIDDLEWARE=[]):
        services.reset()
        queued[:] = [status]
        assert post("/status", bearer("erin")).status_code == status
        retry = post("/status", bearer("erin"))
        assert retry.status_code == 201 and "Idempotent-Replayed" not in retry
    services.reset()


def test_the_memory_store_is_bounded_by_bytes_as_well_as_count():
    store = MemoryIdempotency(max_entries=1000, max_bytes=64 * 1024)
    body = b"x" * 10_000
    for n in range(20):  # 20 x 10 kB under a 64 kB budget
        store.reserve(f"k{n}").commit(body)
        assert store.bytes <= store.max_bytes
    kept = [n for n in range(20) if store.get(f"k{n}") is not None]
    assert kept == list(range(20 - len(kept), 20)) and 3 <= len(kept) <= 6  # newest kept
    assert store.bytes == sum(RECORD_OVERHEAD + len(f"k{n}") + 32 + 1 + 10_000 for n in kept)
    huge = store.reserve("huge")
    assert huge.commit(b"y" * 100_000) is False  # over the whole budget: not kept
    assert store.get("huge") is None and store.bytes <= store.max_bytes
