"""The ``idempotent`` view decorator and middleware, on memory and on real Redis.

Callers are real: every request carries a bearer token minted by the toolkit's ``auth``
battery (the ``jwt`` adapter) and verified by it, through ``bearer_required``,
``BearerAuthentication`` or the idempotency layer itself.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading

import pytest
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.test import RequestFactory, override_settings

from toolkit_batteries import services
from toolkit_batteries.auth.decorators import bearer_required
from toolkit_batteries.core.errors import http_status
from toolkit_batteries.idempotency.decorators import (
    IdempotencyMiddleware,
    idempotent,
    stored_key,
)

from ..cache.helpers import unique

factory = RequestFactory()
AUTH = {"auth": {"adapter": "jwt", "options": {"jwt": {"secret": secrets.token_urlsafe(40)}}}}


@pytest.fixture(params=["memory", "kvserver"])
def store(request):
    """Point the ``idempotency`` service at memory or a unique Redis prefix; auth at jwt."""
    if request.param == "memory":
        block = {"adapter": "memory"}
    else:
        url = request.getfixturevalue("redis_url")
        block = {
            "adapter": "kvserver",
            "options": {"kvserver": {"addr": url, "prefix": unique("t-") + ":"}},
        }
    with override_settings(TOOLKIT={"idempotency": block, **AUTH}):
        yield services.idempotency()
        if request.param == "kvserver":
            import redis

            raw = redis.Redis.from_url(request.getfixturevalue("redis_url"))
            keys = list(raw.scan_iter(match=block["options"]["kvserver"]["prefix"] + "*"))
            if keys:
                raw.delete(*keys)
            raw.close()


def bearer(subject: str = "user-1") -> str:
    """Return an ``Authorization`` value with a fresh token for ``subject``."""
    return "Bearer " + services.auth().issue(subject).token


def post(
    path="/orders",
    body=b'{"qty": 1}',
    key: str | None = "key-1",
    method="post",
    user: str | None = "user-1",
    **extra,
):
    """Build a request with the key and a real bearer token of ``user`` (None: anonymous)."""
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    if user is not None:
        headers["HTTP_AUTHORIZATION"] = bearer(user)
    return getattr(factory, method)(
        path, data=body, content_type="application/json", **headers, **extra
    )


class Counter:
    """A view that counts its runs and answers 201 with a body, a header and a cookie."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request):
        self.calls += 1
        response = JsonResponse({"order": self.calls}, status=201)
        response["X-Order"] = str(self.calls)
        response.set_cookie("session", "abc")
        return response


def error_of(response) -> dict:
    return json.loads(response.content)["error"]


def test_a_retry_replays_the_stored_response(store):
    view = Counter()
    wrapped = idempotent(view)
    first = wrapped(post())
    second = wrapped(post())  # a fresh token of the same user: the same caller
    assert view.calls == 1
    assert (first.status_code, second.status_code) == (201, 201)
    assert second.content == first.content == b'{"order": 1}'
    assert second["Content-Type"] == "application/json" and second["X-Order"] == "1"
    assert second["Idempotent-Replayed"] == "true" and not first.has_header("Idempotent-Replayed")
    assert "session" not in second.cookies  # Set-Cookie is not replayed


def test_the_same_key_with_a_different_request_is_refused(store):
    wrapped = idempotent(Counter())
    wrapped(post())
    for request in (
        post(body=b'{"qty": 2}'),
        post(path="/other"),
        post(method="put"),
        post(path="/orders?x=1"),
    ):
        response = wrapped(request)
        assert response.status_code == http_status("failed_precondition") == 400
        assert error_of(response)["code"] == "failed_precondition"
        assert "Idempotency-Key" in error_of(response)["message"]


def test_requests_without_a_key_run_every_time(store):
    view = Counter()
    wrapped = idempotent(view)
    wrapped(post(key=None))
    wrapped(post(key=None))
    assert view.calls == 2


def test_a_required_key_answers_400_when_missing(store):
    view = Counter()
    response = idempotent(required=True)(view)(post(key=None))
    assert response.status_code == 400 and error_of(response)["code"] == "invalid_argument"
    assert view.calls == 0


@pytest.mark.parametrize("key", ["", "   ", "k" * 256, "bad\x01key"])
def test_a_malformed_key_answers_400(store, key):
    view = Counter()
    response = idempotent(view)(post(key=key))
    assert response.status_code == 400 and error_of(response)["code"] == "invalid_argument"
    assert view.calls == 0


def test_the_longest_key_is_kept_as_its_hash(store):
    view = Counter()
    wrapped = idempotent(view)
    longest = "k" * 255
    wrapped(post(key=longest))
    assert wrapped(post(key=longest))["Idempotent-Replayed"] == "true"
    assert wrapped(post(key="k" * 254)).status_code == 201 and view.calls == 2
    assert len(stored_key("scope", longest)) <= 255
    assert stored_key("s", "short").endswith(":short")


def test_safe_methods_pass_through(store):
    view = Counter()
    wrapped = idempotent(view)
    wrapped(factory.get("/orders", HTTP_IDEMPOTENCY_KEY="key-1", HTTP_AUTHORIZATION=bearer()))
    wrapped(factory.get("/orders", HTTP_IDEMPOTENCY_KEY="key-1", HTTP_AUTHORIZATION=bearer()))
    assert view.calls == 2


def test_a_concurrent_duplicate_gets_409_while_the_first_runs(store):
    entered, finish = threading.Event(), threading.Event()
    calls = []

    @idempotent
    @bearer_required
    def slow(request):
        calls.append(1)
        entered.set()
        finish.wait(10)
        return HttpResponse(b"done", status=200)

    results = {}
    first_request = post()
    first = threading.Thread(target=lambda: results.setdefault("first", slow(first_request)))
    first.start()
    assert entered.wait(10)
    duplicate = slow(post())
    finish.set()
    first.join(10)
    assert duplicate.status_code == 409 and duplicate["Retry-After"] == "1"
    assert error_of(duplicate)["code"] == "already_exists"
    assert results["first"].content == b"done"
    assert slow(post()).content == b"done" and len(calls) == 1


def test_a_failing_view_releases_the_key(store):
    attempts = []

    @idempotent
    def flaky(request):
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("transient")
        if len(attempts) == 2:
            return HttpResponse(b"oops", status=503)
        return HttpResponse(b"ok", status=200)

    with pytest.raises(RuntimeError):
        flaky(post())
    assert flaky(post()).status_code == 503  # the exception released the key
    assert flaky(post()).content == b"ok"  # and so did the 5xx answer
    assert flaky(post())["Idempotent-Replayed"] == "true"
    assert len(attempts) == 3


@pytest.mark.parametrize("status", [401, 403, 408, 429, 500, 502, 503, 504])
def test_answers_about_credentials_time_or_load_are_not_stored(store, status):
    statuses = [status]

    @idempotent
    def view(request):
        return HttpResponse(b"", status=statuses.pop(0) if statuses else 201)

    assert view(post()).status_code == status
    second = view(post())
    assert second.status_code == 201 and not second.has_header("Idempotent-Replayed")
    assert view(post())["Idempotent-Replayed"] == "true"


def test_client_errors_are_stored_and_replayed(store):
    view_calls = []

    @idempotent
    def invalid(request):
        view_calls.append(1)
        return JsonResponse({"error": {"code": "invalid_argument"}}, status=400)

    assert invalid(post()).status_code == 400
    assert invalid(post()).status_code == 400 and len(view_calls) == 1


def test_streaming_responses_are_not_stored(store):
    calls = []

    @idempotent
    def stream(request):
        calls.append(1)
        return StreamingHttpResponse(iter([b"a", b"b"]))

    stream(post())
    stream(post())
    assert len(calls) == 2


@pytest.mark.parametrize("order", ["idempotent outside bearer_required", "inside"])
def test_keys_are_scoped_by_user(store, order):
    view = Counter()
    if order == "inside":
        wrapped = bearer_required(idempotent(view))
    else:
        wrapped = idempotent(bearer_required(view))
    assert json.loads(wrapped(post(user="alice")).content) == {"order": 1}
    assert json.loads(wrapped(post(user="bob")).content) == {"order": 2}
    again = wrapped(post(user="alice"))
    assert json.loads(again.content) == {"order": 1} and again["Idempotent-Replayed"] == "true"


def test_anonymous_requests_are_not_stored_without_an_explicit_scope(store):
    view = Counter()
    wrapped = idempotent(view)
    wrapped(post(user=None))
    second = wrapped(post(user=None))
    assert view.calls == 2 and not second.has_header("Idempotent-Replayed")


def test_a_custom_scope(store):
    view = Counter()
    wrapped = idempotent(scope=lambda request: request.headers.get("X-Tenant", ""))(view)
    wrapped(post(user=None, HTTP_X_TENANT="a"))
    wrapped(post(user=None, HTTP_X_TENANT="b"))
    wrapped(post(user=None, HTTP_X_TENANT="a"))
    assert view.calls == 2
    wrapped(post(user="alice", HTTP_X_TENANT="a"))  # narrows: never widens past the caller
    assert view.calls == 3


def test_an_unreachable_store_fails_closed():
    block = {"adapter": "kvserver", "options": {"kvserver": {"addr": "127.0.0.1:1"}}}
    view = Counter()
    with override_settings(TOOLKIT={"idempotency": block, **AUTH}):
        response = idempotent(view)(post())
    assert response.status_code == 503 and error_of(response)["code"] == "unavailable"
    assert view.calls == 0


def test_drf_views_are_rendered_before_they_are_stored(store):
    from rest_framework.response import Response
    from rest_framework.test import APIRequestFactory
    from rest_framework.views import APIView

    from toolkit_batteries.auth.drf import BearerAuthentication, BearerRequired

    class Orders(APIView):
        authentication_classes = [BearerAuthentication]
        permission_classes = [BearerRequired]
        calls = 0

        def post(self, request):
            type(self).calls += 1
            return Response(
                {"id": type(self).calls, "echo": request.data, "by": request.user.id},
                status=201,
            )

    view = idempotent(Orders.as_view())
    api = APIRequestFactory()

    def request(user="user-1"):
        return api.post(
            "/orders",
            {"qty": 3},
            format="json",
            HTTP_IDEMPOTENCY_KEY="drf-1",
            HTTP_AUTHORIZATION=bearer(user),
        )

    first, second = view(request()), view(request())
    assert Orders.calls == 1
    assert second.status_code == 201 and second["Idempotent-Replayed"] == "true"
    expected = {"id": 1, "echo": {"qty": 3}, "by": "user-1"}
    assert json.loads(second.content) == expected == json.loads(first.content)
    other = view(request("user-2"))
    assert json.loads(other.content)["by"] == "user-2" and Orders.calls == 2


def test_async_views(store):
    calls = []

    @idempotent
    async def create(request):
        calls.append(1)
        return HttpResponse(b"async", status=201)

    first = asyncio.run(create(post()))
    second = asyncio.run(create(post()))
    assert (first.content, second.content) == (b"async", b"async")
    assert second["Idempotent-Replayed"] == "true" and len(calls) == 1


def test_the_middleware_handles_every_view_once(store):
    view = Counter()
    decorated = idempotent(bearer_required(view))  # inside the middleware: not reserved twice
    middleware = IdempotencyMiddleware(decorated)
    first = middleware(post())
    second = middleware(post())
    assert view.calls == 1 and first.status_code == 201
    assert second["Idempotent-Replayed"] == "true"
    assert middleware(post(body=b"{}")).status_code == 400
    assert json.loads(middleware(post(user="user-2")).content) == {"order": 2}


def test_without_auth_configured_the_credential_itself_scopes_the_key():
    view = Counter()
    wrapped = idempotent(view)

    def request(authorization):
        return factory.post(
            "/orders",
            data=b"{}",
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY="key-1",
            HTTP_AUTHORIZATION=authorization,
        )

    with override_settings(TOOLKIT={"idempotency": {"adapter": "memory"}}):
        first = wrapped(request("Bearer token-of-alice"))
        other = wrapped(request("Basic Ym9iOnB3"))
        again = wrapped(request("Bearer token-of-alice"))
    assert json.loads(first.content) == {"order": 1} and json.loads(other.content) == {"order": 2}
    assert again["Idempotent-Replayed"] == "true" and view.calls == 2
