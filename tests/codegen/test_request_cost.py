"""A generated call costs what a plain Django view costs, and frees what it allocated.

DRF links a view to its request and the request to itself; left linked, every generated
call used to leave its request, view, response and WSGI environ (23 objects) as cyclic
garbage, freed only when the collector ran, at a cost per request a plain view never pays.
A schema compiled in-process and called through Django's WSGI handler (no test client,
which keeps its own references) must leave none on success, and still answer errors,
rendered after the view returns, in the toolkit's shape. The response is written by the
C JSON encoder directly (``JSONEncoder.encode`` ran some ninety bytecodes of Python per
call to get there), and the access rule of an action is looked up when its route is
built, including the one ``as_view(auth=...)`` gives.
"""

from __future__ import annotations

import gc
import io
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test.utils import override_settings

try:
    from .django_support import served_schema
except ImportError:  # rootdir-relative import mode (tests/codegen is not a package)
    from django_support import served_schema

SCHEMA = """\
entity Member {
  id: uuid @primary
  email: string @validate(format: "email", max_len: 255)
  name: string @validate(min_len: 1, max_len: 100)
  created_at: timestamp @default(now())
}

service MemberService {
  rpc CreateMember(
    email: string @validate(format: "email", max_len: 255),
    name: string @validate(min_len: 1, max_len: 100)
  ) -> Member {
    http: POST "/v1/members"
    auth: none
  }

  rpc GetMember(id: uuid) -> Member {
    http: GET "/v1/members/{id}"
    auth: none
  }

  rpc DropMember(id: uuid) -> Member {
    http: DELETE "/v1/members/{id}"
    auth: required
  }
}
"""


@pytest.fixture(scope="module")
def members_app(
    tmp_path_factory: pytest.TempPathFactory, django_db_setup: Any, django_db_blocker: Any
) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("cost")
    with served_schema(root, SCHEMA, "cg_cost", django_db_blocker) as app:
        yield app


@pytest.fixture
def call(members_app: Any, db: Any) -> Iterator[Any]:
    """Return ``call(method, path, body) -> (status, json)`` through the WSGI handler."""
    # No middleware: the test settings' session and auth middleware link each request to
    # itself (``request.user``'s closure), which is theirs to answer for, not the view's.
    with override_settings(MIDDLEWARE=[]):
        handler = WSGIHandler()
    # As Django's test client does: keep the test's connection (and transaction) open.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)

    def send(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        raw = b"" if body is None else json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "test",
            "SERVER_PORT": "80",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(raw),
            "CONTENT_LENGTH": str(len(raw)),
            "CONTENT_TYPE": "application/json",
            "wsgi.errors": sys.stderr,
        }
        status: list[str] = []
        out = b"".join(handler(environ, lambda s, headers: status.append(s)))
        return int(status[0][:3]), json.loads(out)

    try:
        yield send
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _cyclic_garbage(calls: Any) -> int:
    """Return how many requests, views and responses ``calls()`` left to the cycle collector.

    Only those objects are counted: the process is shared with other tests (an xdist
    worker), whose threads may leave garbage of their own while ``calls()`` runs.
    """
    from django.http import HttpRequest
    from django.http.response import HttpResponseBase
    from rest_framework.request import Request
    from rest_framework.views import APIView

    kinds = (HttpRequest, HttpResponseBase, Request, APIView)
    collecting, flags = gc.isenabled(), gc.get_debug()
    gc.collect()
    gc.disable()
    try:
        calls()
        gc.set_debug(gc.DEBUG_SAVEALL)  # keep what the collector finds, to look at it
        gc.collect()
        return sum(isinstance(found, kinds) for found in gc.garbage)
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
        if collecting:
            gc.enable()


def test_successful_calls_leave_no_cyclic_garbage(call: Any) -> None:
    status, made = call("POST", "/v1/members", {"email": "a@example.com", "name": "Ann"})
    assert status == 200 and made["name"] == "Ann"
    path = f"/v1/members/{made['id']}"

    def calls() -> None:
        for n in range(10):
            created = call("POST", "/v1/members", {"email": f"m{n}@example.com", "name": "M"})
            assert created[0] == 200
            assert call("GET", path) == (200, made)

    assert _cyclic_garbage(calls) == 0


def test_errors_rendered_after_the_view_still_answer_in_the_toolkit_shape(call: Any) -> None:
    status, body = call("POST", "/v1/members", {"email": "not an email", "name": "Ann"})
    assert status == 400
    assert list(body["error"]["fields"]) == ["email"]
    status, body = call("POST", "/v1/members", {"email": "a@example.com", "name": ""})
    assert status == 400 and list(body["error"]["fields"]) == ["name"]
    status, body = call("DELETE", "/v1/members/0b3d6a5e-5b0c-4c7e-9f3a-2f1d8c7e6a5b")
    assert (status, body["error"]["code"]) == (401, "unauthenticated")
    status, body = call("GET", "/v1/members/0b3d6a5e-5b0c-4c7e-9f3a-2f1d8c7e6a5b")
    assert (status, body["error"]["code"]) == (404, "not_found")


def _json_frames_from_the_runtime(calls: Any) -> int:
    """Return how many ``json`` module frames the API runtime called during ``calls()``.

    Frames the test's own encoding and decoding runs are not counted: only those whose
    caller is a module of ``toolkit_batteries.api_runtime``.
    """
    seen = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal seen
        if event != "call" or "/json/" not in frame.f_code.co_filename:
            return
        caller = frame.f_back
        if caller is not None and "api_runtime" in caller.f_code.co_filename:
            seen += 1

    sys.setprofile(count)
    try:
        calls()
    finally:
        sys.setprofile(None)
    return seen


def test_responses_are_written_by_the_c_json_encoder(call: Any) -> None:
    answers: list[Any] = []
    body = {"email": "c@example.com", "name": "Cé"}
    assert (
        _json_frames_from_the_runtime(lambda: answers.append(call("POST", "/v1/members", body)))
        == 0
    )
    status, member = answers[0]
    assert status == 200 and member["name"] == "Cé"
    path = f"/v1/members/{member['id']}"
    assert _json_frames_from_the_runtime(lambda: answers.append(call("GET", path))) == 0
    assert answers[1] == (200, member)


def test_the_encoder_writes_what_the_json_encoder_writes() -> None:
    from toolkit_batteries.api_runtime.codec import _ENCODER, _encode

    for value in (
        {"id": "x", "name": "Zoë \u2028", "n": [1, 2.5, -3, 10**30, True, None], "d": {}},
        [],
        "text",
        1.0,
    ):
        assert _encode(value) == _ENCODER.encode(value)
    loop: list[Any] = []
    loop.append(loop)
    for bad, error in ((float("nan"), ValueError), (object(), TypeError), (loop, ValueError)):
        with pytest.raises(error):
            _encode({"x": bad})
    assert _encode({"after": "a failed call"}) == '{"after":"a failed call"}'


def test_as_view_initkwargs_decide_the_access_of_an_action(members_app: Any, db: Any) -> None:
    from django.test import RequestFactory

    from toolkit_batteries.api_runtime.views import Bearer

    views = __import__(f"{members_app.module}.generated.views", fromlist=["*"])
    viewset = views.MemberServiceViewSet
    body = json.dumps({"email": "d@example.com", "name": "D"})
    guarded = viewset.as_view({"post": "create_member"}, auth={"create_member": Bearer()})
    public = viewset.as_view({"post": "create_member"})
    factory = RequestFactory()

    def post(view: Any) -> Any:
        return view(factory.post("/v1/members", body, content_type="application/json"))

    refused = post(guarded)
    assert refused.status_code == 401
    assert json.loads(refused.rendered_content)["error"]["code"] == "unauthenticated"
    answered = post(public)
    assert answered.status_code == 200 and answered["Allow"] == "POST, OPTIONS"
