"""The shared HTTP error shape, body reading, pagination and DRF exception handler."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpResponse
from django.test import RequestFactory
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from toolkit_batteries.http import ApiError, error_response, read_json
from toolkit_batteries.http.drf import exception_handler
from toolkit_batteries.http.middleware import JsonErrorMiddleware
from toolkit_batteries.http.pagination import (
    MAX_LIMIT,
    Page,
    decode_cursor,
    encode_cursor,
    parse_limit,
)

rf = RequestFactory()


def body(response: HttpResponse) -> dict:
    """Return the decoded JSON body of a rendered response."""
    if isinstance(response, Response):
        response.accepted_renderer = None
        return dict(response.data)
    return json.loads(response.content)


def test_error_response_shape_and_headers() -> None:
    """The body nests code, message and fields; extra headers are set."""
    r = error_response(429, None, "slow down", None, {"Retry-After": "3"})
    assert r.status_code == 429
    assert body(r) == {"error": {"code": "resource_exhausted", "message": "slow down"}}
    assert r["Retry-After"] == "3"
    r = error_response(400, "invalid_argument", "bad", {"email": ["invalid"]})
    assert body(r)["error"]["fields"] == {"email": ["invalid"]}


def test_401_is_always_generic_with_bearer_challenge() -> None:
    """A 401 never carries the caller's reason and always challenges for a bearer."""
    r = error_response(401, "unauthenticated", "token expired at 12:00 for alice")
    assert body(r)["error"]["message"] == "authentication required"
    assert r["WWW-Authenticate"] == "Bearer"
    # The one other fixed 401 message is a failed login's.
    r = error_response(401, "unauthenticated", "invalid credentials")
    assert body(r)["error"]["message"] == "invalid credentials"


def test_read_json_accepts_objects_only() -> None:
    """A JSON object is returned; garbage, arrays and empty bodies are 400."""
    ok = rf.post("/x", data=b'{"a": 1}', content_type="application/json")
    assert read_json(ok) == {"a": 1}
    for raw in (b"{nope", b"[1, 2]", b"", b"\xff\xfe"):
        req = rf.post("/x", data=raw, content_type="application/json")
        with pytest.raises(ApiError) as err:
            read_json(req)
        assert err.value.status == 400
        assert err.value.code == "invalid_argument"


def test_read_json_depth_bound_counts_levels_not_brackets() -> None:
    """Many brackets (in strings, or side by side) never refuse a body; one level too deep does."""
    from toolkit_batteries.http.errors import MAX_JSON_DEPTH

    def post(data: object) -> object:
        raw = json.dumps(data).encode()
        return rf.post("/x", data=raw, content_type="application/json")

    def nested(levels: int) -> dict[str, object]:
        value: object = "x"
        for _ in range(levels - 1):  # the outer object is one more level
            value = [value]
        return {"a": value}

    in_strings = {"a": "[{" * 500}
    side_by_side = {"b": [[1]] * 100}
    for shallow in (in_strings, side_by_side, nested(MAX_JSON_DEPTH)):
        assert read_json(post(shallow)) == shallow
    with pytest.raises(ApiError) as err:
        read_json(post(nested(MAX_JSON_DEPTH + 1)))
    assert err.value.status == 400
    assert f"deeper than {MAX_JSON_DEPTH}" in err.value.message


def test_read_json_caps_the_body() -> None:
    """A body over the cap is 413 before it is parsed."""
    req = rf.post("/x", data=b'{"a": "' + b"x" * 2000 + b'"}', content_type="application/json")
    with pytest.raises(ApiError) as err:
        read_json(req, max_bytes=1000)
    assert (err.value.status, err.value.code) == (413, "payload_too_large")


def test_pagination_cursor_round_trip_and_garbage() -> None:
    """Cursors round-trip; garbage cursors and bad limits are 400 on their field."""
    cursor = encode_cursor({"created_at": "2026-01-01T00:00:00Z", "id": "a"})
    assert decode_cursor(cursor) == {"created_at": "2026-01-01T00:00:00Z", "id": "a"}
    assert "=" not in cursor
    for bad in ("!!!", "bm90LWpzb24", encode_cursor({"a": 1})[:-3] + "***", "W10"):
        with pytest.raises(ApiError) as err:
            decode_cursor(bad)
        assert err.value.fields == {"cursor": ["invalid"]}
    assert parse_limit(None) == 50
    assert parse_limit("200") == MAX_LIMIT
    for bad in ("0", "201", "-1", "ten"):
        with pytest.raises(ApiError) as err:
            parse_limit(bad)
        assert "limit" in err.value.fields
    assert Page([1, 2], None).next_cursor is None


def test_middleware_renders_api_errors_and_hides_internals(caplog) -> None:
    """ApiError becomes its response; a crash is a bare 500 and is logged, not shown."""

    def boom(request):
        raise RuntimeError("db password is hunter2")

    mw = JsonErrorMiddleware(boom)
    req = rf.get("/api/thing")
    r = mw.process_exception(req, ApiError(404, message="no such thing"))
    assert (r.status_code, body(r)["error"]["code"]) == (404, "not_found")
    r = mw.process_exception(req, RuntimeError("db password is hunter2"))
    assert r.status_code == 500
    assert b"hunter2" not in r.content
    assert body(r) == {"error": {"code": "internal", "message": "internal error"}}
    assert mw.process_exception(req, RequestDataTooBig()).status_code == 413
    assert mw.process_exception(req, Http404()).status_code == 404
    # Outside the JSON prefixes Django keeps its own 404 page.
    assert mw.process_exception(rf.get("/admin/x"), Http404()) is None


class _View(APIView):
    authentication_classes: list = []
    permission_classes: list = []


def _drf(exc: Exception) -> Response:
    return exception_handler(exc, {"view": _View()})


def test_drf_handler_maps_every_family() -> None:
    """Validation, parse, auth, throttling, 404 and crashes all use the one shape."""
    r = _drf(exceptions.ValidationError({"email": ["bad"], "address": {"zip": ["short"]}}))
    assert r.status_code == 400
    assert r.data["error"]["fields"] == {"email": ["bad"], "address.zip": ["short"]}
    assert _drf(exceptions.ParseError()).data["error"]["message"] == "invalid JSON body"
    r = _drf(exceptions.NotAuthenticated())
    assert (r.status_code, r["WWW-Authenticate"]) == (401, "Bearer")
    r = _drf(exceptions.Throttled(wait=2.2))
    assert (r.status_code, r["Retry-After"]) == (429, "3")
    assert _drf(Http404()).data["error"]["code"] == "not_found"
    assert _drf(NotImplementedError()).status_code == 501
    r = _drf(KeyError("secret"))
    assert r.status_code == 500
    assert "secret" not in json.dumps(r.data)


def test_drf_view_end_to_end(settings) -> None:
    """A real APIView with the handler configured answers bad JSON in the shape."""
    settings.REST_FRAMEWORK = {
        "EXCEPTION_HANDLER": "toolkit_batteries.http.drf.exception_handler",
    }

    class Echo(_View):
        def post(self, request):
            return Response(request.data)

    factory = APIRequestFactory()
    r = Echo.as_view()(factory.post("/v1/x", b"{bad", content_type="application/json"))
    r.render()
    assert r.status_code == 400
    assert json.loads(r.content)["error"]["code"] == "invalid_argument"
