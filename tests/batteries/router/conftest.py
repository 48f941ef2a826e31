"""Open the router battery the real way (configuration, then a Container), per adapter.

``serve`` drives whatever application the router returns through its own protocol:
a WSGI call, or an ASGI scope with ``receive``/``send``.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from toolkit_batteries.core.config import Config
from toolkit_batteries.core.container import Container

VARIANTS = ("stdhttp", "router_a")


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest) -> Iterator[Any]:
    container = Container(Config.load({"router": {"adapter": request.param}}, {}))
    try:
        yield container.router()
    finally:
        container.close()


def serve(router: Any, path: str) -> tuple[int, bytes]:
    """GET ``path`` from the router's application, spoken in its protocol."""
    app = router.application()
    if router.protocol == "wsgi":
        status: list[str] = []
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": path,
            "SCRIPT_NAME": "",
            "QUERY_STRING": "",
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "HTTP_HOST": "testserver",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(b""),
        }
        chunks = app(environ, lambda s, headers: status.append(s))
        body = b"".join(chunks)
        chunks.close()
        return int(status[0].split()[0]), body
    return async_to_sync(_asgi)(app, path)


async def _asgi(app: Any, path: str) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 80),
    }
    sent: list[dict[str, Any]] = []
    first = True
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": b"", "more_body": False}
        await never.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), timeout=10)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
