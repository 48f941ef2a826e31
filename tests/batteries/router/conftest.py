"""Open the router battery the real way (configuration, then a Container), per adapter.

``serve`` drives whatever application the router returns through its own protocol:
a WSGI call, or an ASGI scope with ``receive``/``send``.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from tests.asgi import asgi_request
from tests.support.batteries import BatteryOpener

VARIANTS = ("stdhttp", "router_a")


@pytest.fixture(params=VARIANTS)
def opened(request: pytest.FixtureRequest, open_battery: BatteryOpener) -> Any:
    return open_battery("router", {"adapter": request.param})


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
    return await asgi_request(app, path, {"host": "testserver"})
