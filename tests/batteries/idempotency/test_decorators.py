"""The ``idempotent`` view decorator and middleware, on memory and on real Redis."""

from __future__ import annotations

import asyncio
import json
import threading
from types import SimpleNamespace

import pytest
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.test import RequestFactory, override_settings

from toolkit_batteries import services
from toolkit_batteries.idempotency.decorators import IdempotencyMiddleware, idempotent

from ..cache.helpers import unique

factory = RequestFactory()


@pytest.fixture(params=["memory", "kvserver"])
def store(request):
    """Point the ``idempotency`` service at memory or a unique Redis prefix."""
    if request.param == "memory":
        block = {"adapter": "memory"}
    else:
        url = request.getfixturevalue("redis_url")
        block = {
            "adapter": "kvserver",
            "options": {"kvserver": {"addr": url, "prefix": unique("t-") + ":"}},
        }
    with override_settings(TOOLKIT={"idempotency": block}):
        yield services.idempotency()
        if request.param == "kvserver":
            import redis

            raw = redis.Redis.from_url(request.getfixturevalue("redis_url"))
            keys = list(raw.scan_iter(match=block["options"]["kvserver"]["prefix"] + "*"))
            if keys:
                raw.delete(*keys)
            raw.close()


def post(path="/orders", body=b'{"qty": 1}', key: str | None = "key-1", method="post", **extra):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
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
    second = wrapped(post())
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
        assert response.status_code == 422
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


def test_safe_methods_pass_through(store):
    view = Counter()
    wrapped = idempotent(view)
    wrapped(factory.get("/orders", HTTP_IDEMPOTENCY_KEY="key-1"))
    wrapped(factory.get("/orders", HTTP_IDEMPOTENCY_KEY="key-1"))
    assert view.calls == 2


def test_a_concurrent_duplicate_gets_409_while_the_first_runs(store):
    entered, finish = threading.Event(), threading.Event()
    calls = []

    @idempotent
    def slow(request):
        calls.append(1)
        entered.set()
        finish.wait(10)
        return HttpResponse(b"done", status=200)

    results = {}
    first = threading.Thread(target=lambda: results.setdefault("first", slow(post())))
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


def test_keys_are_scoped_by_user(store):
    view = Counter()
    wrapped = idempotent(view)
    alice, bob = post(), post()
    alice.user = SimpleNamespace(is_authenticated=True, pk=1)
    bob.user = SimpleNamespace(is_authenticated=True, pk=2)
    assert json.loads(wrapped(alice).content) == {"order": 1}
    assert json.loads(wrapped(bob).content) == {"order": 2}
    again = post()
    again.user = SimpleNamespace(is_authenticated=True, pk=1)
    assert json.loads(wrapped(again).content) == {"order": 1}


def test_a_custom_scope(store):
    view = Counter()
    wrapped = idempotent(scope=lambda request: request.headers.get("X-Tenant", ""))(view)
    wrapped(post(HTTP_X_TENANT="a"))
    wrapped(post(HTTP_X_TENANT="b"))
    wrapped(post(HTTP_X_TENANT="a"))
    assert view.calls == 2


def test_an_unreachable_store_fails_closed():
    block = {"adapter": "kvserver", "options": {"kvserver": {"addr": "127.0.0.1:1"}}}
    view = Counter()
    with override_settings(TOOLKIT={"idempotency": block}):
        response = idempotent(view)(post())
    assert response.status_code == 503 and error_of(response)["code"] == "unavailable"
    assert view.calls == 0


def test_drf_views_are_rendered_before_they_are_stored(store):
    from rest_framework.response import Response
    from rest_framework.test import APIRequestFactory
    from rest_framework.views import APIView

    class Orders(APIView):
        authentication_classes: list = []
        permission_classes: list = []
        calls = 0

        def post(self, request):
            type(self).calls += 1
            return Response({"id": type(self).calls, "echo": request.data}, status=201)

    view = idempotent(Orders.as_view())
    api = APIRequestFactory()

    def request():
        return api.post("/orders", {"qty": 3}, format="json", HTTP_IDEMPOTENCY_KEY="drf-1")

    first, second = view(request()), view(request())
    assert Orders.calls == 1
    assert second.status_code == 201 and second["Idempotent-Replayed"] == "true"
    assert json.loads(second.content) == {"id": 1, "echo": {"qty": 3}} == json.loads(first.content)


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
    decorated = idempotent(view)  # inside the middleware: must not reserve twice
    middleware = IdempotencyMiddleware(decorated)
    first = middleware(post())
    second = middleware(post())
    assert view.calls == 1 and first.status_code == 201
    assert second["Idempotent-Replayed"] == "true"
    assert middleware(post(body=b"{}")).status_code == 422
