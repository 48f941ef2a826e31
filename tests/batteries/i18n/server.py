"""A translation service on 127.0.0.1 speaking the ``remote`` adapter's wire format.

* ``GET /catalogs/<locale>``: ``{"locale", "plural_forms", "messages"}`` or 404;
* ``GET /catalogs``: ``{"locales": [...]}``.

Tests set :attr:`delay` (seconds each answer waits), :attr:`status` (a forced status),
read :attr:`requests` (paths in order), :attr:`peak` (most requests in flight at once)
and :attr:`authorization` (the last ``Authorization`` header).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeTranslationService:
    def __init__(self, catalogs: dict[str, tuple[str, dict[str, Any]]]) -> None:
        self.catalogs = catalogs
        self.delay = 0.0
        self.status: int | None = None
        self.requests: list[str] = []
        self.authorization: str | None = None
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with service._lock:
                    service.requests.append(self.path)
                    service.authorization = self.headers.get("Authorization")
                    service.in_flight += 1
                    service.peak = max(service.peak, service.in_flight)
                try:
                    if service.delay:
                        time.sleep(service.delay)
                finally:
                    # Out of flight before the answer is written: once the client has read
                    # it, it may start its next request, which must not see this one.
                    with service._lock:
                        service.in_flight -= 1
                self._answer()

            def _answer(self) -> None:
                path = urllib.parse.urlsplit(self.path).path
                if service.status is not None:
                    return self._send(service.status, {"error": "forced"})
                if path == "/catalogs":
                    return self._send(200, {"locales": sorted(service.catalogs)})
                if path.startswith("/catalogs/"):
                    locale = urllib.parse.unquote(path[len("/catalogs/") :])
                    if locale in service.catalogs:
                        plural, messages = service.catalogs[locale]
                        body = {"locale": locale, "plural_forms": plural, "messages": messages}
                        return self._send(200, body)
                return self._send(404, {"error": "no such catalog"})

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    pass

        return Handler
