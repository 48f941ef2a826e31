"""``@ratelimit``, ``RateLimitMiddleware`` and ``Policy.call`` on Django's async stack.

The views are ``async def`` and served by a real ASGI server (uvicorn, a child process).
On the landed code the decorator returned an unawaited coroutine (Django answers 500),
the middleware forced the whole chain onto a thread, and ``Policy.call`` on a coroutine
function returned the coroutine unguarded.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from asgiref.sync import iscoroutinefunction

from tests.ports import free_port
from toolkit_batteries.ratelimit.middleware import RateLimitMiddleware

ROOT = Path(__file__).resolve().parents[3]


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=15) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "tests.batteries.ratelimit.asgi_app:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.batteries.ratelimit.asgi_settings"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    output = proc.stdout.read() if proc.poll() is not None else ""
                    pytest.fail(f"uvicorn did not start within 30 s: {output}")
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_ratelimit_decorator_on_an_async_view(server: str) -> None:
    first = fetch(f"{server}/limited")
    assert first[0] == 200 and first[2].startswith(b"async ok")
    assert fetch(f"{server}/limited")[0] == 200
    status, headers, body = fetch(f"{server}/limited")
    assert status == 429 and int(headers["Retry-After"]) >= 1
    assert json.loads(body)["error"]["code"] == "resource_exhausted"


def test_ratelimit_middleware_on_the_async_stack(server: str) -> None:
    assert fetch(f"{server}/mw/page")[0] == 200
    assert fetch(f"{server}/mw/page")[0] == 200
    status, _, body = fetch(f"{server}/mw/page")
    assert status == 429 and json.loads(body)["error"]["code"] == "resource_exhausted"


def test_policy_call_guards_a_coroutine(server: str) -> None:
    status, _, body = fetch(f"{server}/guarded")
    assert status == 200 and json.loads(body)["value"] == 42


def test_policy_timeout_cancels_a_coroutine(server: str) -> None:
    status, _, body = fetch(f"{server}/too-slow")
    answer = json.loads(body)
    assert status == 504 and answer["error"] == "OperationTimeoutError"
    assert 0.25 <= answer["elapsed"] < 10  # the 300 ms timeout, not the 30 s sleep


def test_the_middleware_is_a_coroutine_function_on_an_async_chain() -> None:
    async def get_response(request):
        return None

    assert iscoroutinefunction(RateLimitMiddleware(get_response))
    assert not iscoroutinefunction(RateLimitMiddleware(lambda request: None))
