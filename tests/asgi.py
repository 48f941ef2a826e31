"""Drive an ASGI application with one HTTP request, without a server or Django's client.

Django's ``AsyncClient`` always sends its own ``Host`` header besides a given one, so the
tests that depend on the exact headers (tenant subdomains) or on a specific ASGI
application (the router battery's) call the application with a scope of their own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any


async def asgi_request(
    app: Any, path: str, headers: Mapping[str, str] | None = None, *, timeout: float = 10
) -> tuple[int, bytes]:
    """Send ``GET path`` with exactly ``headers`` to ``app``; return the status and body."""
    given = {k.lower(): v for k, v in (headers or {}).items()}
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in given.items()],
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
        await never.wait()  # the request has no more body; wait until cancelled
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), timeout=timeout)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body
